// A network as data: named values (graph inputs, constants, node outputs)
// with static shapes, and nodes in topological order, each applying one Loom
// op (graph/ops.h) to values and producing one value. Constants (weights)
// hold their data. Every pass maps a Graph to a Graph (graph/passes/).
//
// The JSON form (save_graph/load_graph) is readable and diffable:
//   {"format": "loom-graph", "version": 1,
//    "inputs":    [{"name": "x", "shape": [1, 3, 224, 224]}],   (+ "integer_range": N)
//    "constants": [{"name": "w1", "shape": [64, 3, 7, 7], "offset": 0},
//                  {"name": "eps", "shape": [], "values": [1e-05]}],
//    "nodes":     [{"name": "conv1", "op": "conv2d", "inputs": ["x", "w1"],
//                   "output": "c1", "attrs": {"strides": [2, 2], ...}}],
//    "outputs":   ["y"],
//    "weights_file": "resnet50.graph.bin"}
// Small constants (up to 16 values) are inline; the others are raw float32
// (little-endian) at `offset` floats in the weights file, written next to
// the JSON file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace loom::graph {

using Shape = std::vector<int64_t>;

struct Constant {
  Shape shape;
  std::vector<float> data;  // row-major, shape_size(shape) values
};

struct Node {
  std::string name;                  // unique among nodes; names the node in messages
  std::string op;                    // a Loom op (graph/ops.h)
  std::vector<std::string> inputs;   // value names
  std::string output;                // value name
  nlohmann::json attrs = nlohmann::json::object();  // resolved by validate()
};

struct GraphInput {
  std::string name;
  Shape shape;
  // 0: float data. N > 0: integers in [0, N) carried as floats (token ids
  // into an embedding of N rows, an integer mask); random inputs respect it.
  int64_t integer_range = 0;
};

class Graph {
 public:
  std::vector<GraphInput> inputs;
  std::map<std::string, Constant> constants;
  std::vector<Node> nodes;  // topological order
  std::vector<std::string> outputs;

  // Checks the graph and computes every value's shape: unique value and node
  // names, every input defined before its use, known ops with valid
  // attributes (defaults filled in), input counts, shapes that agree. Throws
  // LoomError with one line naming the node and its op, e.g.
  //   "node 'conv1' (conv2d): input 1 has 3 dims, expected 4".
  void validate();

  // After validate().
  const Shape& shape(const std::string& value) const;
  bool is_constant(const std::string& value) const { return constants.count(value) > 0; }
  bool is_input(const std::string& value) const;
  // The node producing `value`, or nullptr (graph input or constant).
  const Node* producer(const std::string& value) const;
  // Nodes reading `value` (each once, in graph order).
  std::vector<const Node*> consumers(const std::string& value) const;
  // A value name not used yet, starting with `base`.
  std::string fresh_name(const std::string& base) const;

  double flop_count() const;  // of every node, as its op lowers it

 private:
  std::map<std::string, Shape> shapes_;
};

// Far beyond any real tensor, and small enough that products of dimensions
// and offsets never overflow int64 in Loom's shape code.
constexpr int64_t kMaxElements = int64_t{1} << 40;

int64_t num_elements(const Shape& s);
// The number of elements of `shape`; a negative dimension or more than
// kMaxElements throws LoomError naming `what`.
int64_t checked_elements(const Shape& shape, const std::string& what);
std::string shape_string(const Shape& s);  // "1x3x224x224" ("scalar" for [])

nlohmann::json graph_to_json(const Graph& g, const std::string& weights_file);
// `dir` is where a relative weights_file is looked up.
Graph graph_from_json(const nlohmann::json& j, const std::string& dir);
// Writes PATH (JSON) and the weights file next to it (PATH without ".json"
// plus ".bin").
void save_graph(const Graph& g, const std::string& path);
// Static shapes for graph inputs, by name: what pins an ONNX model's
// dynamic dimensions (batch, sequence) before shape inference.
using InputShapes = std::map<std::string, Shape>;
// "input_ids=1x128" -> {"input_ids", {1, 128}} into `shapes`; a malformed
// spec throws LoomError naming it.
void parse_input_shape(const std::string& spec, InputShapes& shapes);

}  // namespace loom::graph
