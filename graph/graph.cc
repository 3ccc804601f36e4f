#include "graph/graph.h"

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <set>

#include "graph/ops.h"
#include "ir/compute_dag.h"
#include "ir/error.h"

namespace loom::graph {

namespace {

std::string node_prefix(const Node& n) { return "node '" + n.name + "' (" + n.op + "): "; }

}  // namespace

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t checked_elements(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw LoomError(what + ": negative dimension " + std::to_string(d));
    if (d > kMaxElements || (d > 0 && n > kMaxElements / d))
      throw LoomError(what + ": shape " + nlohmann::json(shape).dump() + " is too large (over 2^40 elements)");
    n *= d;
  }
  return n;
}

std::string shape_string(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

void Graph::validate() {
  shapes_.clear();
  auto define = [&](const std::string& name, const Shape& s, const std::string& what) {
    if (name.empty()) throw LoomError(what + ": empty value name");
    if (!shapes_.emplace(name, s).second) throw LoomError(what + ": value '" + name + "' is defined twice");
    for (int64_t d : s)
      if (d < 1) throw LoomError(what + ": value '" + name + "' has a dimension " + std::to_string(d) + " (shapes must be static and positive)");
    // Bounded here, so that no product of dimensions below can overflow.
    checked_elements(s, what + ": value '" + name + "'");
  };
  for (const auto& in : inputs) define(in.name, in.shape, "input '" + in.name + "'");
  for (const auto& [name, c] : constants) {
    define(name, c.shape, "constant '" + name + "'");
    if (static_cast<int64_t>(c.data.size()) != num_elements(c.shape))
      throw LoomError("constant '" + name + "': " + std::to_string(c.data.size()) + " values for shape " +
                      shape_string(c.shape));
  }
  std::set<std::string> node_names;
  for (Node& n : nodes) {
    if (n.name.empty()) throw LoomError("a node of op '" + n.op + "' has no name");
    if (!node_names.insert(n.name).second) throw LoomError("node '" + n.name + "': the name is used twice");
    const OpDef* op = find_op(n.op);
    if (!op) throw LoomError(node_prefix(n) + "unknown op (known: " + op_names() + ")");
    const int count = static_cast<int>(n.inputs.size());
    if (count < op->min_inputs || (op->max_inputs >= 0 && count > op->max_inputs))
      throw LoomError(node_prefix(n) + std::to_string(count) + " inputs, expected " +
                      (op->min_inputs == op->max_inputs ? std::to_string(op->min_inputs)
                       : op->max_inputs < 0         ? "at least " + std::to_string(op->min_inputs)
                                                    : std::to_string(op->min_inputs) + " to " +
                                                          std::to_string(op->max_inputs)));
    std::vector<Shape> in_shapes;
    for (const auto& v : n.inputs) {
      auto it = shapes_.find(v);
      if (it == shapes_.end()) throw LoomError(node_prefix(n) + "input '" + v + "' is not defined before the node");
      in_shapes.push_back(it->second);
    }
    Shape out;
    try {
      n.attrs = resolve_attrs(*op, n.attrs);
      out = op->infer_shape(in_shapes, n.attrs);
    } catch (const LoomError& e) {
      throw LoomError(node_prefix(n) + e.what());
    } catch (const nlohmann::json::exception& e) {
      // A required attribute (no default to check its kind against) of the
      // wrong JSON type, read by the shape rule.
      throw LoomError(node_prefix(n) + "an attribute has the wrong type (" + e.what() + ")");
    }
    define(n.output, out, node_prefix(n) + "output");
  }
  if (outputs.empty()) throw LoomError("the graph has no outputs");
  for (const auto& o : outputs)
    if (!shapes_.count(o)) throw LoomError("output '" + o + "' is not a value of the graph");
}

const Shape& Graph::shape(const std::string& value) const {
  auto it = shapes_.find(value);
  if (it == shapes_.end()) throw LoomError("value '" + value + "' has no shape (unknown value or graph not validated)");
  return it->second;
}

bool Graph::is_input(const std::string& value) const {
  for (const auto& in : inputs)
    if (in.name == value) return true;
  return false;
}

const Node* Graph::producer(const std::string& value) const {
  for (const auto& n : nodes)
    if (n.output == value) return &n;
  return nullptr;
}

std::vector<const Node*> Graph::consumers(const std::string& value) const {
  std::vector<const Node*> out;
  for (const auto& n : nodes)
    for (const auto& v : n.inputs)
      if (v == value) {
        out.push_back(&n);
        break;
      }
  return out;
}

std::string Graph::fresh_name(const std::string& base) const {
  std::set<std::string> used;
  for (const auto& in : inputs) used.insert(in.name);
  for (const auto& [k, c] : constants) used.insert(k);
  for (const auto& n : nodes) {
    used.insert(n.output);
    used.insert(n.name);
  }
  if (!used.count(base)) return base;
  for (int i = 1;; ++i)
    if (!used.count(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

double Graph::flop_count() const {
  double flops = 0;
  for (const auto& n : nodes) {
    const OpDef* op = find_op(n.op);
    std::vector<Tensor> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      ins.push_back(placeholder(op_detail::ir_shape(shape(n.inputs[i])), "in" + std::to_string(i)));
    Tensor out = op->lower(ins, n.attrs, "out");
    ComputeDAG dag(ins, {out});
    flops += dag.flop_count();
  }
  return flops;
}

// ---- JSON form --------------------------------------------------------------

namespace {

constexpr size_t kInlineValues = 16;

Shape read_shape(const nlohmann::json& j, const std::string& what) {
  if (!j.is_array()) throw LoomError(what + ".shape: expected an array of dimensions");
  Shape s;
  for (const auto& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1) throw LoomError(what + ".shape: expected positive integers");
    s.push_back(d.get<int64_t>());
  }
  return s;
}

std::string read_string(const nlohmann::json& j, const char* key, const std::string& what) {
  if (!j.contains(key) || !j[key].is_string()) throw LoomError(what + "." + key + ": expected a string");
  return j[key].get<std::string>();
}

void check_keys(const nlohmann::json& j, const std::set<std::string>& allowed, const std::string& what) {
  if (!j.is_object()) throw LoomError(what + ": expected an object");
  for (const auto& [k, v] : j.items())
    if (!allowed.count(k)) throw LoomError(what + "." + k + ": unknown key");
}

}  // namespace

nlohmann::json graph_to_json(const Graph& g, const std::string& weights_file) {
  nlohmann::json j = {{"format", "loom-graph"}, {"version", 1}};
  j["inputs"] = nlohmann::json::array();
  for (const auto& in : g.inputs) {
    nlohmann::json ij = {{"name", in.name}, {"shape", in.shape}};
    if (in.integer_range > 0) ij["integer_range"] = in.integer_range;
    j["inputs"].push_back(ij);
  }
  j["constants"] = nlohmann::json::array();
  int64_t offset = 0;
  for (const auto& [name, c] : g.constants) {
    nlohmann::json cj = {{"name", name}, {"shape", c.shape}};
    if (c.data.size() <= kInlineValues) {
      cj["values"] = c.data;
    } else {
      cj["offset"] = offset;
      offset += static_cast<int64_t>(c.data.size());
    }
    j["constants"].push_back(cj);
  }
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : g.nodes)
    j["nodes"].push_back({{"name", n.name}, {"op", n.op}, {"inputs", n.inputs}, {"output", n.output}, {"attrs", n.attrs}});
  j["outputs"] = g.outputs;
  if (offset > 0) j["weights_file"] = weights_file;
  return j;
}

Graph graph_from_json(const nlohmann::json& j, const std::string& dir) {
  check_keys(j, {"format", "version", "inputs", "constants", "nodes", "outputs", "weights_file"}, "graph");
  if (!j.contains("format") || j["format"] != "loom-graph") throw LoomError("graph.format: expected \"loom-graph\"");
  if (!j.contains("version") || j["version"] != 1) throw LoomError("graph.version: expected 1");
  Graph g;
  for (const auto& in : j.value("inputs", nlohmann::json::array())) {
    check_keys(in, {"name", "shape", "integer_range"}, "graph.inputs[]");
    g.inputs.push_back({read_string(in, "name", "graph.inputs[]"), read_shape(in.value("shape", nlohmann::json()), "graph.inputs[]")});
    if (in.contains("integer_range")) {
      const auto& r = in["integer_range"];
      if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > (int64_t{1} << 24))
        throw LoomError("graph.inputs[].integer_range: expected an integer in [1, 2^24], got " + r.dump());
      g.inputs.back().integer_range = r.get<int64_t>();
    }
  }
  std::ifstream weights;
  std::string weights_path;
  if (j.contains("weights_file")) {
    if (!j["weights_file"].is_string()) throw LoomError("graph.weights_file: expected a file name");
    weights_path = j["weights_file"].get<std::string>();
    if (!weights_path.empty() && weights_path[0] != '/' && !dir.empty()) weights_path = dir + "/" + weights_path;
    weights.open(weights_path, std::ios::binary);
    if (!weights) throw LoomError("graph.weights_file: cannot open " + weights_path);
  }
  for (const auto& cj : j.value("constants", nlohmann::json::array())) {
    check_keys(cj, {"name", "shape", "values", "offset"}, "graph.constants[]");
    std::string name = read_string(cj, "name", "graph.constants[]");
    const std::string what = "constant '" + name + "'";
    Constant c;
    c.shape = read_shape(cj.value("shape", nlohmann::json()), what);
    const int64_t count = num_elements(c.shape);
    if (cj.contains("values")) {
      if (!cj["values"].is_array()) throw LoomError(what + ".values: expected numbers");
      for (const auto& v : cj["values"]) {
        if (!v.is_number()) throw LoomError(what + ".values: expected numbers");
        c.data.push_back(v.get<float>());
      }
    } else {
      if (!cj.contains("offset") || !cj["offset"].is_number_integer() || cj["offset"].get<int64_t>() < 0)
        throw LoomError(what + ": expected \"values\" or an \"offset\" into the weights file");
      if (!weights) throw LoomError(what + ": stored in the weights file but the graph names none");
      c.data.resize(count);
      weights.seekg(cj["offset"].get<int64_t>() * static_cast<int64_t>(sizeof(float)));
      weights.read(reinterpret_cast<char*>(c.data.data()), count * static_cast<int64_t>(sizeof(float)));
      if (!weights) throw LoomError(what + ": the weights file " + weights_path + " is too short");
    }
    g.constants[name] = std::move(c);
  }
  for (const auto& nj : j.value("nodes", nlohmann::json::array())) {
    check_keys(nj, {"name", "op", "inputs", "output", "attrs"}, "graph.nodes[]");
    Node n;
    n.name = read_string(nj, "name", "graph.nodes[]");
    n.op = read_string(nj, "op", "node '" + n.name + "'");
    n.output = read_string(nj, "output", "node '" + n.name + "'");
    if (!nj.contains("inputs") || !nj["inputs"].is_array()) throw LoomError("node '" + n.name + "'.inputs: expected an array");
    for (const auto& v : nj["inputs"]) {
      if (!v.is_string()) throw LoomError("node '" + n.name + "'.inputs: expected value names");
      n.inputs.push_back(v.get<std::string>());
    }
    n.attrs = nj.value("attrs", nlohmann::json::object());
    g.nodes.push_back(std::move(n));
  }
  for (const auto& o : j.value("outputs", nlohmann::json::array())) {
    if (!o.is_string()) throw LoomError("graph.outputs: expected value names");
    g.outputs.push_back(o.get<std::string>());
  }
  g.validate();
  return g;
}

void save_graph(const Graph& g, const std::string& path) {
  std::string stem = path;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  const std::string bin = stem + ".bin";
  const std::string bin_name = bin.substr(bin.find_last_of('/') + 1);
  nlohmann::json j = graph_to_json(g, bin_name);
  if (j.contains("weights_file")) {
    std::ofstream out(bin, std::ios::binary);
    for (const auto& [name, c] : g.constants)
      if (c.data.size() > kInlineValues)
        out.write(reinterpret_cast<const char*>(c.data.data()), static_cast<std::streamsize>(c.data.size() * sizeof(float)));
    if (!out) throw LoomError("cannot write " + bin);
  }
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  if (!out) throw LoomError("cannot write " + path);
}

void parse_input_shape(const std::string& spec, InputShapes& shapes) {
  const size_t eq = spec.find('=');
  const std::string usage = "shape '" + spec + "': expected NAME=DIMxDIMx... (e.g. input_ids=1x128)";
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw LoomError(usage);
  Shape dims;
  std::stringstream parts(spec.substr(eq + 1));
  for (std::string d; std::getline(parts, d, 'x');) {
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos) throw LoomError(usage);
    dims.push_back(std::stoll(d));
    if (dims.back() < 1) throw LoomError(usage);
  }
  checked_elements(dims, "shape '" + spec + "'");
  shapes[spec.substr(0, eq)] = dims;
}

}  // namespace loom::graph
