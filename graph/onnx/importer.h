// The ONNX importer's own declarations, private to graph/onnx/ (its plain
// interface is graph/onnx_import.h). This folder alone sees the ONNX and
// protobuf headers, and only its files include this one.
//
// One pass over the nodes in order. Values whose contents are known at import
// time (initializers, Constant nodes, shape computations on static shapes)
// live in `known_` and are folded; a known float value read as data by a
// Loom node becomes a graph constant then. Everything else becomes Loom nodes
// whose values keep their ONNX names.
//
// importer.cc walks the model and keeps the values, current_node.cc reads
// the node being converted, tensors.cc decodes tensors, and ops_*.cc map the
// ONNX ops by family.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/onnx_import.h"

namespace loom::graph::onnx_detail {

using nlohmann::json;

// ---- files and tensors (tensors.cc) -------------------------------------------

std::string read_file(const std::string& path);
// `bytes` as one whole message; false when they do not parse.
bool parse_message(const std::string& bytes, google::protobuf::MessageLite* msg);
// An element type as messages spell it ("float", "int64", "type 99").
std::string type_name(int32_t elem_type);
std::string ints_string(const std::vector<int64_t>& v);  // "[1,2,3]"

// ---- values known at import time ------------------------------------------------

// Float data or integer shape data (int64 and int32 alike).
struct Known {
  bool is_float = true;
  Shape shape;
  std::vector<float> f;
  std::vector<int64_t> i;

  int64_t size() const { return static_cast<int64_t>(is_float ? f.size() : i.size()); }
  double at(int64_t k) const { return is_float ? f[k] : static_cast<double>(i[k]); }
};

Known known_ints(Shape shape, std::vector<int64_t> values);
// Float32, int64 or int32 data, else LoomError.
Known known_from_proto(const onnx::TensorProto& t);

std::vector<int64_t> strides_of(const Shape& s);  // row-major
// The tensor of shape `shape` whose element j is src's element index[j], or
// `fill` where index[j] is -1: every data-movement fold (Gather, Slice,
// Concat, Transpose, Tile, Pad) is one of these.
Known take(const Known& src, Shape shape, const std::vector<int64_t>& index, double fill = 0);
// Per element of `shape` (row-major), the source index `source` gives it.
std::vector<int64_t> source_indices(const Shape& shape, const std::function<int64_t(const std::vector<int64_t>&)>& source);
// f applied element-wise to known values with numpy broadcasting; the result
// float or integer (ops_logic.cc). Values pass as long double, which holds
// every int64 exactly (exporters write INT64_MAX as an open slice end).
using FoldFn = std::function<long double(const std::vector<long double>&)>;
Known fold_broadcast(const std::vector<const Known*>& in, bool result_float, const FoldFn& f);
// Calls fn with every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn);

// ---- the importer ---------------------------------------------------------------

// Throws unless attribute `a` is of `type` (or untyped); `what` names the type.
void expect_type(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType type, const char* what);

class Importer {
 public:
  Importer(onnx::ModelProto& model, const OnnxImportOptions& options);
  Graph run();

  using Converter = std::function<void(Importer&)>;
  static const std::map<std::string, Converter>& converters();

 private:
  // Setup (importer.cc).
  void read_opset();
  void pin_input_shapes(const InputShapes& shapes);
  bool inference_is_safe() const;
  void infer_shapes();
  void collect_values();
  void load_known_inputs(const OnnxImportOptions& options);
  void check_input_shapes();
  void check_operators();
  void convert_node(int index);
  void add_outputs();
  void add_inputs();

  // Names and lookups (importer.cc).
  std::string resolve(const std::string& name) const;
  const Known* known(const std::string& name);
  const Known* constant_data(const std::string& name);
  const onnx::TypeProto* type_of(const std::string& name) const;
  int32_t elem_type(const std::string& name) const;
  Shape shape_of(const std::string& name);
  std::string data(const std::string& name);
  std::string fresh_value(const std::string& base);
  std::string fresh_node(const std::string& base);
  void check_float(const std::string& value);

  // The current node (current_node.cc).
  int num_inputs() const { return node_->input_size(); }
  bool has_in(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
  const std::string& in(int i) const;
  bool output_used(int k) const;
  std::string output0();
  std::string main_output();
  std::string float_carried_output();
  void require_inputs(int min, int max);
  const onnx::AttributeProto* attr(const std::string& name) const;
  void allow_attrs(const std::set<std::string>& names) const;
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& def) const;
  const Known& const_input(int i, const std::string& what);
  std::string input_label(int i, const std::string& what) const;
  std::vector<int64_t> const_ints(int i, const std::string& what);
  double const_scalar(int i, const std::string& what);
  std::string emit(const std::string& op, std::vector<std::string> inputs, json attrs, std::string output,
                   const std::string& suffix = "");
  void set_known(const std::string& output, Known value);
  void alias(const std::string& output, const std::string& value);

  // Converters, one per ONNX op (or family). Arithmetic (ops_math.cc):
  void unary(const std::string& op);
  // An element-wise op with float attributes of the same names (ONNX's defaults).
  void activation(const std::string& op, const std::vector<std::pair<std::string, float>>& attrs);
  void prelu();
  void gelu();
  void binary(const std::string& op);
  void pow();
  void variadic(const std::string& op);
  void clip();
  void reduce(const std::string& op, int64_t axes_input_opset);
  void gemm();
  void matmul();
  void einsum();
  void arg_extreme(bool max);
  void instance_norm();
  void group_norm();
  // Neural-network ops (ops_nn.cc):
  std::vector<int64_t> window_pads(const Shape& x, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);
  std::vector<int64_t> pair_attr(const std::string& name);
  void conv();
  void conv_transpose();
  void pool(const std::string& op);
  void global_avg_pool();
  void batch_norm();
  void softmax();
  void layer_norm();
  // Shapes and data movement (ops_shape.cc):
  void flatten();
  void reshape();
  void transpose();
  void concat();
  void shape();
  void gather();
  void unsqueeze();
  void squeeze();
  // Their axes: an attribute before opset 13, input 1 from it on (required
  // for Unsqueeze, optional for Squeeze).
  std::vector<int64_t> squeeze_axes(bool required);
  void reshape_to(const Shape& shape);  // the node's input 0 as `shape`
  // Recurrent layers, unrolled (ops_recurrent.cc):
  std::string new_constant(const std::string& base, Shape shape, std::vector<float> values);
  std::string step_node(const std::string& op, std::vector<std::string> inputs, json attrs);
  std::string slice_cols(const std::string& value, int64_t rows, int64_t first, int64_t count);
  void recurrent(bool lstm);
  // Comparisons, logic and integer arithmetic (ops_logic.cc):
  void compare();
  void logical_not();
  void where();
  void mod();
  void range();
  bool fold_unary(const std::string& op);
  bool fold_variadic(const std::string& op);
  // Selecting, repeating and padding data (ops_indexing.cc):
  void emit_slice(const std::string& value, const std::vector<int64_t>& first, const std::vector<int64_t>& step,
                  const Shape& size, const std::string& output, const std::string& suffix = "");
  void slice();
  void split();
  void expand();
  void tile();
  void scatter_nd();
  void resize();
  void pad();
  // Constants and aliases (ops_values.cc):
  void identity();
  void dropout();
  void constant();
  void cast();
  void constant_of_shape();

  onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  int64_t opset_ = 1;

  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, const onnx::TypeProto*> value_types_;
  std::vector<std::string> graph_inputs_;     // not initializers, in order
  std::set<std::string> graph_input_set_;
  std::set<std::string> consumed_;            // read by a node or a graph output
  std::set<std::string> all_names_;           // every value name, ONNX's and generated
  std::map<std::string, Known> known_;        // initializers (converted on use), Constant nodes, folds
  std::map<std::string, Known> known_inputs_; // OnnxImportOptions::known_input_files
  std::map<std::string, std::string> alias_;  // Identity, Dropout: output → value
  std::map<std::string, Shape> inferred_;     // outputs of the Loom nodes so far: their shapes
  std::map<std::string, int64_t> integer_inputs_;  // integer graph inputs read as data: their value range
  std::set<std::string> defined_;             // values of the Loom graph so far
  std::set<std::string> inputs_read_;         // graph inputs read as data
  std::set<std::string> node_names_;

  const onnx::NodeProto* node_ = nullptr;
  std::string node_name_;
  Graph out_;
};

}  // namespace loom::graph::onnx_detail
