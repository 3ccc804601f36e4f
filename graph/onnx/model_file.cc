// load_graph: a model file of either form. Here, in the importer's library,
// because an .onnx file needs the importer.
#include <algorithm>
#include <fstream>
#include <string>

#include "graph/onnx_import.h"
#include "ir/error.h"

namespace loom::graph {

Graph load_graph(const std::string& path, const InputShapes& shapes) {
  auto ends_with = [&](const char* ext) {
    const size_t n = std::char_traits<char>::length(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (ends_with(".onnx")) {
    OnnxImportOptions options;
    options.input_shapes = shapes;
    return import_onnx(path, options);
  }
  if (!ends_with(".json")) throw LoomError(path + ": expected a model file ending in .onnx or .json");
  std::ifstream in(path);
  if (!in) throw LoomError(path + ": cannot open");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw LoomError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  const size_t slash = path.find_last_of('/');
  Graph g;
  try {
    g = graph_from_json(j, slash == std::string::npos ? "" : path.substr(0, slash));
  } catch (const LoomError& e) {
    throw LoomError(path + ": " + e.what());
  }
  // A graph's shapes are static: a pin can only agree with them.
  for (const auto& [name, shape] : shapes) {
    auto it = std::find_if(g.inputs.begin(), g.inputs.end(), [&](const GraphInput& in) { return in.name == name; });
    if (it == g.inputs.end()) throw LoomError(path + ": no input '" + name + "' to give a shape");
    if (it->shape != shape)
      throw LoomError(path + ": input '" + name + "' has shape " + shape_string(it->shape) + ", not " +
                      shape_string(shape));
  }
  return g;
}

}  // namespace loom::graph
