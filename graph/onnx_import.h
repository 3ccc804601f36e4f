// ONNX models → Loom graphs. Each ONNX node maps onto the Loom ops of
// graph/ops.h; shape computations (Shape, Gather, Unsqueeze, Concat, ... on
// static shapes and constants) are folded at import time, Identity and
// Dropout become aliases, initializers and Constant nodes become graph
// constants. Shapes must be static (dynamic dimensions pinned by
// OnnxImportOptions::input_shapes) and data float32.
//
// Every problem is a LoomError with one line, prefixed by the model's name
// and naming the node and its ONNX op type, e.g.
//   "model.onnx: node 'Conv_3' (Conv): attribute auto_pad=FOO is not supported".
//
// This interface is plain: only the implementation in graph/onnx/ sees the
// ONNX and protobuf headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace loom::graph {

struct OnnxImportOptions {
  // Values of graph inputs known at import time: input name → a file holding
  // one serialized TensorProto (an ONNX test case's input_N.pb). They are
  // used where an op needs constant data (Reshape's shape, axes, Clip's
  // bounds, ...); a known float input that is also read as data stays a
  // graph input, one read only as constant data is no longer an input.
  std::map<std::string, std::string> known_input_files;
  // Static shapes for graph inputs whose dimensions the file leaves dynamic
  // (exporters mark batch and sequence so): set before shape inference. A
  // pin must name an input and agree with every static dim it has.
  InputShapes input_shapes;
};

// The imported graph, validated (Graph::validate()). `what` names the model
// in messages (import_onnx uses the path).
Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});
Graph import_onnx_bytes(const std::string& bytes, const std::string& what, const OnnxImportOptions& options = {});

// The ONNX op types (default domain) the importer maps, sorted.
const std::vector<std::string>& onnx_importable_ops();

// What a model file declares, without importing it.
struct OnnxModelInfo {
  std::vector<std::string> inputs;    // graph inputs that are not initializers, in order
  std::vector<std::string> outputs;   // in order
  std::vector<std::string> op_types;  // of every node, in order; "domain:Op" outside the default domain
  int64_t opset = 0;                  // of the default domain
};
OnnxModelInfo read_onnx_model_info(const std::string& path);

// A serialized TensorProto file (e.g. an ONNX test case's output_0.pb):
// its values as floats (bool as ones and zeros, integers as they are),
// row-major, and its shape in `*shape` when given. Other element types
// throw LoomError.
std::vector<float> read_onnx_tensor_file(const std::string& path, Shape* shape = nullptr);

// A model file: Loom's graph JSON (*.json) or ONNX (*.onnx), with `shapes`
// pinning its inputs. Validated.
Graph load_graph(const std::string& path, const InputShapes& shapes = {});

}  // namespace loom::graph
