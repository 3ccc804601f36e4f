// ONNX → Loom graph import (graph/onnx_import.h). The only file that sees the
// ONNX and protobuf headers.
//
// One pass over the nodes in order. Values whose contents are known at import
// time (initializers, Constant nodes, shape computations on static shapes)
// live in `known_` and are folded; a known float value read as data by a
// Loom node becomes a graph constant then. Everything else becomes Loom nodes
// whose values keep their ONNX names.
#include "graph/onnx_import.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph {

namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoomError(path + ": cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw LoomError(path + ": cannot read the file");
  return s.str();
}

// Protobuf's default size limit is below the size of large models.
bool parse_message(const std::string& bytes, google::protobuf::MessageLite* msg) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(INT_MAX);
  return msg->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

onnx::ModelProto parse_model(const std::string& bytes) {
  onnx::ModelProto model;
  if (!parse_message(bytes, &model)) throw LoomError("not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw LoomError("not a valid ONNX model (no graph)");
  return model;
}

std::string type_name(int32_t elem_type) {
  std::string s = onnx::TensorProto_DataType_IsValid(elem_type)
                      ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type))
                      : "type " + std::to_string(elem_type);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ints_string(const std::vector<int64_t>& v) { return json(v).dump(); }

// Far beyond any real tensor, and small enough that products of dimensions
// and offsets never overflow int64 (here or in Loom's shape code).
constexpr int64_t kMaxElements = int64_t{1} << 40;

int64_t checked_elements(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw LoomError(what + ": negative dimension " + std::to_string(d));
    if (d > kMaxElements || (d > 0 && n > kMaxElements / d))
      throw LoomError(what + ": shape " + ints_string(shape) + " is too large (over 2^40 elements)");
    n *= d;
  }
  return n;
}

// ---- values known at import time --------------------------------------------

// Float data or integer shape data (int64 and int32 alike).
struct Known {
  bool is_float = true;
  Shape shape;
  std::vector<float> f;
  std::vector<int64_t> i;

  int64_t size() const { return static_cast<int64_t>(is_float ? f.size() : i.size()); }
  double at(int64_t k) const { return is_float ? f[k] : static_cast<double>(i[k]); }
};

Known known_ints(Shape shape, std::vector<int64_t> values) {
  Known k;
  k.is_float = false;
  k.shape = std::move(shape);
  k.i = std::move(values);
  return k;
}

template <class T>
void copy_raw(const std::string& raw, int64_t n, std::vector<T>* out) {
  if (static_cast<int64_t>(raw.size()) != n * static_cast<int64_t>(sizeof(T)))
    throw LoomError("raw data has " + std::to_string(raw.size()) + " bytes, expected " +
                    std::to_string(n * sizeof(T)));
  out->resize(n);
  if (n) std::memcpy(out->data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as the host
}

template <class Field, class T>
void copy_field(const Field& field, int64_t n, std::vector<T>* out) {
  if (static_cast<int64_t>(field.size()) != n)
    throw LoomError(std::to_string(field.size()) + " values, expected " + std::to_string(n));
  out->assign(field.begin(), field.end());
}

Known known_from_proto(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) throw LoomError("external tensor data is not supported");
  Known k;
  k.shape.assign(t.dims().begin(), t.dims().end());
  const int64_t n = checked_elements(k.shape, "tensor");
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &k.f);
      else copy_field(t.float_data(), n, &k.f);
      break;
    case onnx::TensorProto::INT64:
      k.is_float = false;
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &k.i);
      else copy_field(t.int64_data(), n, &k.i);
      break;
    case onnx::TensorProto::INT32: {
      k.is_float = false;
      std::vector<int32_t> v;
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &v);
      else copy_field(t.int32_data(), n, &v);
      k.i.assign(v.begin(), v.end());
      break;
    }
    default:
      throw LoomError("tensor of type " + type_name(t.data_type()) +
                      " (only float32 data and int64/int32 shape data are supported)");
  }
  return k;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Calls fn with every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (num_elements(shape) == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(idx);
    size_t d = shape.size();
    while (d > 0 && ++idx[d - 1] == shape[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

// The tensor of shape `shape` whose element j is src's element index[j]: every
// data-movement fold (Gather, Slice, Concat, Transpose) is one of these.
Known take(const Known& src, Shape shape, const std::vector<int64_t>& index) {
  Known out;
  out.is_float = src.is_float;
  out.shape = std::move(shape);
  for (int64_t j : index) {
    if (src.is_float) out.f.push_back(src.f[j]);
    else out.i.push_back(src.i[j]);
  }
  return out;
}

// ONNX Reshape's target: 0 copies the input dim, one -1 is inferred.
Shape reshape_target(const Shape& in, const std::vector<int64_t>& spec) {
  Shape out;
  int64_t known = 1;
  int infer = -1;
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t v = spec[d];
    if (v == 0) {
      if (d >= in.size()) throw LoomError("shape " + ints_string(spec) + ": 0 at dim " + std::to_string(d) + " has no input dim");
      v = in[d];
    }
    if (v == -1) {
      if (infer >= 0) throw LoomError("shape " + ints_string(spec) + " has more than one -1");
      infer = static_cast<int>(d);
    } else if (v < 0) {
      throw LoomError("shape " + ints_string(spec) + " has a bad dimension");
    } else {
      known *= v;
    }
    out.push_back(v);
  }
  const int64_t total = num_elements(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) throw LoomError("cannot reshape " + shape_string(in) + " to " + ints_string(spec));
    out[infer] = total / known;
  }
  if (num_elements(out) != total) throw LoomError("cannot reshape " + shape_string(in) + " to " + ints_string(spec));
  return out;
}

int64_t normalized_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw LoomError("axis " + std::to_string(axis) + " is out of range for " + std::to_string(rank) + " dims");
  return axis < 0 ? axis + rank : axis;
}

// Unsqueeze: the input shape with size-1 dims inserted at `axes` (of the output).
Shape unsqueezed(const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t d = normalized_axis(a, rank);
    if (inserted[d]) throw LoomError("axes " + ints_string(axes) + " repeat an axis");
    inserted[d] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[next++]);
  return out;
}

// Squeeze: `axes` removed (all size-1 dims when empty).
Shape squeezed(const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> removed(rank, false);
  for (int64_t a : axes) {
    const int64_t d = normalized_axis(a, rank);
    if (in[d] != 1) throw LoomError("axis " + std::to_string(a) + " has size " + std::to_string(in[d]) + ", not 1");
    removed[d] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? in[d] == 1 : removed[d])) out.push_back(in[d]);
  return out;
}

// ---- the importer -----------------------------------------------------------

class Importer {
 public:
  Importer(onnx::ModelProto& model, const OnnxImportOptions& options);
  Graph run();

  using Converter = std::function<void(Importer&)>;
  static const std::map<std::string, Converter>& converters();

 private:
  // Setup.
  void read_opset();
  bool inference_is_safe() const;
  void infer_shapes();
  void collect_values();
  void load_known_inputs(const OnnxImportOptions& options);
  void check_input_shapes();
  void check_operators();
  void convert_node(int index);
  void add_outputs();
  void add_inputs();

  // Names and lookups.
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

  // The current node.
  int num_inputs() const { return node_->input_size(); }
  bool has_in(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
  const std::string& in(int i) const;
  bool output_used(int k) const;
  std::string output0();
  std::string main_output();
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

  // Converters, one per ONNX op (or family).
  void unary(const std::string& op);
  void gelu();
  void binary(const std::string& op);
  void pow();
  void variadic(const std::string& op);
  void clip();
  std::vector<int64_t> window_pads(const Shape& x, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);
  std::vector<int64_t> pair_attr(const std::string& name);
  void conv();
  void pool(const std::string& op);
  void global_avg_pool();
  void batch_norm();
  void gemm();
  void matmul();
  void flatten();
  void reshape();
  void transpose();
  void concat();
  void softmax();
  void reduce(const std::string& op, int64_t axes_input_opset);
  void layer_norm();
  void identity();
  void dropout();
  void constant();
  void shape();
  void gather();
  void unsqueeze();
  void squeeze();
  void cast();
  void slice();
  void constant_of_shape();
  void pad();

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
  std::set<std::string> defined_;             // values of the Loom graph so far
  std::set<std::string> inputs_read_;         // graph inputs read as data
  std::set<std::string> node_names_;

  const onnx::NodeProto* node_ = nullptr;
  std::string node_name_;
  Graph out_;
};

Importer::Importer(onnx::ModelProto& model, const OnnxImportOptions& options)
    : model_(model), graph_(model.graph()) {
  read_opset();
  if (inference_is_safe()) infer_shapes();
  collect_values();
  load_known_inputs(options);
}

void Importer::read_opset() {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
}

// ONNX's shape inference divides by window attributes unchecked (a zero
// stride or group is a SIGFPE), so it runs only on models the importer can
// take as a whole, with sane window attributes; on the others the import
// fails at a node anyway, with that node's message.
bool Importer::inference_is_safe() const {
  for (const auto& n : graph_.node()) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || !converters().count(n.op_type())) return false;
    for (const auto& a : n.attribute()) {
      const bool window = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape" ||
                          a.name() == "group" || a.name() == "pads";
      if (!window) continue;
      const int64_t least = a.name() == "pads" ? 0 : 1;
      if (a.type() == onnx::AttributeProto::INT && (a.i() < least || a.i() > kMaxElements)) return false;
      for (int64_t v : a.ints())
        if (v < least || v > kMaxElements) return false;
    }
  }
  return true;
}

// Shapes of intermediate values, for the folds and the mappings that need
// them (Shape, Unsqueeze to reshape, auto_pad, ...). Problems in the model
// surface later, at the node that has them, so inference errors are ignored.
void Importer::infer_shapes() {
  try {
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0,
                                                                   /*enable_data_propagation=*/true));
  } catch (const std::exception&) {
  }
}

void Importer::collect_values() {
  for (const auto& t : graph_.initializer()) {
    initializers_[t.name()] = &t;
    all_names_.insert(t.name());
  }
  for (const auto& v : graph_.value_info()) value_types_[v.name()] = &v.type();
  for (const auto& v : graph_.output()) {
    value_types_[v.name()] = &v.type();
    consumed_.insert(v.name());
    all_names_.insert(v.name());
  }
  for (const auto& v : graph_.input()) {
    value_types_[v.name()] = &v.type();
    all_names_.insert(v.name());
    // Older models list their initializers as inputs too: those are constants.
    if (!initializers_.count(v.name()) && graph_input_set_.insert(v.name()).second) graph_inputs_.push_back(v.name());
  }
  for (const auto& n : graph_.node()) {
    for (const auto& i : n.input()) consumed_.insert(i);
    for (const auto& o : n.output()) all_names_.insert(o);
  }
}

void Importer::load_known_inputs(const OnnxImportOptions& options) {
  for (const auto& [name, path] : options.known_input_files) {
    if (!graph_input_set_.count(name)) throw LoomError("known input '" + name + "' is not a graph input of the model");
    onnx::TensorProto t;
    if (!parse_message(read_file(path), &t)) throw LoomError(path + ": not a valid TensorProto (protobuf parse failed)");
    // A value Loom cannot hold (another element type) stays unknown: the
    // input then fails where it is used, with that node's message.
    try {
      known_inputs_[name] = known_from_proto(t);
    } catch (const LoomError&) {
    }
  }
}

// Graph inputs that will be data need static shapes; checked first so that
// the message names the input rather than some node downstream of it.
void Importer::check_input_shapes() {
  for (const auto& name : graph_inputs_) {
    if (known_inputs_.count(name) && !known_inputs_.at(name).is_float) continue;
    const onnx::TypeProto* t = type_of(name);
    if (!t || !t->has_tensor_type())
      throw LoomError("input '" + name + "': not a tensor (only float32 tensors are supported)");
    if (!t->tensor_type().has_shape()) throw LoomError("input '" + name + "': no shape (shapes must be static)");
    for (const auto& d : t->tensor_type().shape().dim()) {
      if (d.has_dim_value()) continue;
      if (d.has_dim_param())
        throw LoomError("input '" + name + "': dynamic dimension '" + d.dim_param() + "' (shapes must be static)");
      throw LoomError("input '" + name + "': a dimension without a size (shapes must be static)");
    }
    checked_elements(shape_of(name), "input '" + name + "'");
  }
}

Graph Importer::run() {
  check_input_shapes();
  check_operators();
  for (int i = 0; i < graph_.node_size(); ++i) convert_node(i);
  add_outputs();
  add_inputs();
  return std::move(out_);
}

// The first unsupported operator is the model's problem, reported before any
// node that only fails for lack of shapes (inference is skipped then).
void Importer::check_operators() {
  for (int i = 0; i < graph_.node_size(); ++i) {
    const auto& n = graph_.node(i);
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (default_domain && converters().count(n.op_type())) continue;
    const std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    throw LoomError("node '" + name + "' (" + (default_domain ? "" : n.domain() + ":") + n.op_type() +
                    "): unsupported operator");
  }
}

void Importer::convert_node(int index) {
  node_ = &graph_.node(index);
  const std::string& op = node_->op_type();
  node_name_ = fresh_node(node_->name().empty() ? op + "_" + std::to_string(index) : node_->name());
  const bool default_domain = node_->domain().empty() || node_->domain() == "ai.onnx";
  const std::string shown_op = default_domain ? op : node_->domain() + ":" + op;
  try {
    if (node_->output_size() == 0 || node_->output(0).empty()) throw LoomError("output 0 has no name");
    auto it = converters().find(op);
    if (!default_domain || it == converters().end()) throw LoomError("unsupported operator");
    it->second(*this);
  } catch (const LoomError& e) {
    throw LoomError("node '" + node_name_ + "' (" + shown_op + "): " + e.what());
  }
}

void Importer::add_outputs() {
  if (graph_.output_size() == 0) throw LoomError("the model has no outputs");
  for (const auto& o : graph_.output()) {
    try {
      check_float(o.name());
      out_.outputs.push_back(data(o.name()));
    } catch (const LoomError& e) {
      throw LoomError("output '" + o.name() + "': " + e.what());
    }
  }
}

void Importer::add_inputs() {
  for (const auto& name : graph_inputs_)
    if (inputs_read_.count(name)) out_.inputs.push_back({name, shape_of(name)});
}

// ---- names and lookups --------------------------------------------------------

std::string Importer::resolve(const std::string& name) const {
  std::string n = name;
  for (auto it = alias_.find(n); it != alias_.end(); it = alias_.find(n)) n = it->second;
  return n;
}

// A constant: an initializer, a Constant node's or a fold's output, or a known
// integer input (which can only be shape data).
const Known* Importer::known(const std::string& name) {
  const std::string n = resolve(name);
  if (auto it = known_.find(n); it != known_.end()) return &it->second;
  if (auto it = initializers_.find(n); it != initializers_.end()) {
    try {
      return &(known_[n] = known_from_proto(*it->second));
    } catch (const LoomError& e) {
      throw LoomError("initializer '" + n + "': " + e.what());
    }
  }
  if (auto it = known_inputs_.find(n); it != known_inputs_.end() && !it->second.is_float) return &it->second;
  return nullptr;
}

// Constant data an op needs (a shape, axes, bounds): constants and every known input.
const Known* Importer::constant_data(const std::string& name) {
  if (const Known* k = known(name)) return k;
  auto it = known_inputs_.find(resolve(name));
  return it == known_inputs_.end() ? nullptr : &it->second;
}

const onnx::TypeProto* Importer::type_of(const std::string& name) const {
  auto it = value_types_.find(name);
  if (it == value_types_.end()) it = value_types_.find(resolve(name));
  return it == value_types_.end() ? nullptr : it->second;
}

int32_t Importer::elem_type(const std::string& name) const {
  const onnx::TypeProto* t = type_of(name);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : onnx::TensorProto::UNDEFINED;
}

void Importer::check_float(const std::string& value) {
  const int32_t t = elem_type(value);
  if (t != onnx::TensorProto::UNDEFINED && t != onnx::TensorProto::FLOAT)
    throw LoomError("value '" + value + "' has type " + type_name(t) + " (only float32 tensors are supported)");
  const onnx::TypeProto* type = type_of(value);
  if (type && !type->has_tensor_type() && type->value_case() != onnx::TypeProto::VALUE_NOT_SET)
    throw LoomError("value '" + value + "' is not a tensor (only float32 tensors are supported)");
}

Shape Importer::shape_of(const std::string& name) {
  if (const Known* k = constant_data(name)) return k->shape;
  const onnx::TypeProto* t = type_of(name);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape())
    throw LoomError("the shape of '" + name + "' is unknown (ONNX shape inference could not infer it)");
  Shape s;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) {
      throw LoomError("value '" + name + "': " +
                      (d.has_dim_param() ? "dynamic dimension '" + d.dim_param() + "'" : std::string("a dimension without a size")) +
                      " (shapes must be static)");
    }
    s.push_back(d.dim_value());
  }
  return s;
}

// `name` as an input of a Loom node: a graph input, an earlier node's output,
// or a known float value, which becomes a graph constant.
std::string Importer::data(const std::string& name) {
  const std::string n = resolve(name);
  if (defined_.count(n)) return n;
  if (graph_input_set_.count(n)) {
    check_float(n);
    inputs_read_.insert(n);
    defined_.insert(n);
    return n;
  }
  if (const Known* k = known(n)) {
    if (!k->is_float)
      throw LoomError("value '" + n + "' is integer data (only float32 tensors are supported; integers only as shape data)");
    out_.constants[n] = Constant{k->shape, k->f};
    defined_.insert(n);
    return n;
  }
  throw LoomError("value '" + n + "' is not defined before its use");
}

std::string Importer::fresh_value(const std::string& base) {
  std::string name = base;
  for (int k = 1; all_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  all_names_.insert(name);
  return name;
}

std::string Importer::fresh_node(const std::string& base) {
  std::string name = base;
  for (int k = 1; node_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  node_names_.insert(name);
  return name;
}

// ---- the current node ---------------------------------------------------------

const std::string& Importer::in(int i) const {
  if (!has_in(i)) throw LoomError("input " + std::to_string(i) + " is missing");
  return node_->input(i);
}

bool Importer::output_used(int k) const {
  return k < node_->output_size() && !node_->output(k).empty() && consumed_.count(node_->output(k));
}

std::string Importer::output0() {
  check_float(node_->output(0));
  return node_->output(0);
}

// Output 0, for a node whose other outputs (if any) nothing reads.
std::string Importer::main_output() {
  for (int k = 1; k < node_->output_size(); ++k)
    if (output_used(k)) throw LoomError("output " + std::to_string(k) + " ('" + node_->output(k) + "') is not supported");
  return output0();
}

void Importer::require_inputs(int min, int max) {
  const int n = num_inputs();
  if (n < min || n > max)
    throw LoomError(std::to_string(n) + " inputs, expected " +
                    (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
  for (int i = 0; i < min; ++i) in(i);
}

const onnx::AttributeProto* Importer::attr(const std::string& name) const {
  for (const auto& a : node_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Attributes the mapping does not handle are refused rather than ignored.
void Importer::allow_attrs(const std::set<std::string>& names) const {
  for (const auto& a : node_->attribute())
    if (!names.count(a.name())) throw LoomError("attribute '" + a.name() + "' is not supported");
}

void expect_type(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType type, const char* what) {
  if (a.type() != type && a.type() != onnx::AttributeProto::UNDEFINED)
    throw LoomError("attribute '" + a.name() + "': expected " + what);
}

int64_t Importer::attr_int(const std::string& name, int64_t def) const {
  const auto* a = attr(name);
  if (!a) return def;
  expect_type(*a, onnx::AttributeProto::INT, "an integer");
  return a->i();
}

float Importer::attr_float(const std::string& name, float def) const {
  const auto* a = attr(name);
  if (!a) return def;
  expect_type(*a, onnx::AttributeProto::FLOAT, "a float");
  return a->f();
}

std::string Importer::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = attr(name);
  if (!a) return def;
  expect_type(*a, onnx::AttributeProto::STRING, "a string");
  return a->s();
}

std::vector<int64_t> Importer::attr_ints(const std::string& name, const std::vector<int64_t>& def) const {
  const auto* a = attr(name);
  if (!a) return def;
  expect_type(*a, onnx::AttributeProto::INTS, "a list of integers");
  return {a->ints().begin(), a->ints().end()};
}

// Constant input i, or a LoomError naming it as `what` (e.g. "the shape (input 1, 'shape')").
const Known& Importer::const_input(int i, const std::string& what) {
  const Known* k = constant_data(in(i));
  if (!k) throw LoomError(input_label(i, what) + " must be a constant (an initializer or a Constant node's output)");
  return *k;
}

std::string Importer::input_label(int i, const std::string& what) const {
  return what + " (input " + std::to_string(i) + ", '" + in(i) + "')";
}

// Input i as constant integer data (a shape, axes, starts, ...).
std::vector<int64_t> Importer::const_ints(int i, const std::string& what) {
  const Known& k = const_input(i, what);
  if (k.is_float) throw LoomError(input_label(i, what) + " must be integers");
  return k.i;
}

double Importer::const_scalar(int i, const std::string& what) {
  const Known& k = const_input(i, what);
  if (k.size() != 1) throw LoomError(input_label(i, what) + " must have one value, has " + std::to_string(k.size()));
  return k.at(0);
}

// Appends a Loom node. The first node of an ONNX node takes its name; helper
// nodes (a suffix) get names derived from it, and fresh values when `output`
// is empty.
std::string Importer::emit(const std::string& op, std::vector<std::string> inputs, json attrs, std::string output,
                           const std::string& suffix) {
  for (const auto& [key, value] : attrs.items())
    for (const auto& v : value.is_array() ? value : json::array({value}))
      if (v.is_number_integer() && (v.get<int64_t>() > kMaxElements || v.get<int64_t>() < -kMaxElements))
        throw LoomError("attribute " + key + "=" + value.dump() + " is out of range");
  const std::string name = suffix.empty() ? node_name_ : fresh_node(node_name_ + "_" + suffix);
  if (output.empty()) output = fresh_value(name);
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.output = output;
  n.attrs = std::move(attrs);
  out_.nodes.push_back(std::move(n));
  defined_.insert(output);
  return output;
}

void Importer::set_known(const std::string& output, Known value) { known_[output] = std::move(value); }

void Importer::alias(const std::string& output, const std::string& value) {
  if (output != value) alias_[output] = resolve(value);
}

// ---- converters ----------------------------------------------------------------

void Importer::unary(const std::string& op) {
  allow_attrs({});
  require_inputs(1, 1);
  emit(op, {data(in(0))}, json::object(), main_output());
}

// ONNX Gelu (opset 20) when a model has it; exporters of older opsets spell it with Erf.
void Importer::gelu() {
  allow_attrs({"approximate"});
  require_inputs(1, 1);
  const std::string approximate = attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    throw LoomError("attribute approximate=" + approximate + " is not supported");
  emit("gelu", {data(in(0))}, {{"approximate", approximate}}, main_output());
}

// Integer arithmetic with numpy broadcasting: the shape computations exporters emit.
Known fold_int_binary(const std::string& op, const Known& a, const Known& b) {
  if (a.is_float || b.is_float) throw LoomError("mixes integer and float constants");
  const Shape shape = op_detail::broadcast_shapes(a.shape, b.shape);
  const auto sa = strides_of(a.shape), sb = strides_of(b.shape);
  std::vector<int64_t> values;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      const size_t off = shape.size() - d;
      if (off <= a.shape.size() && a.shape[a.shape.size() - off] != 1) ia += idx[d] * sa[a.shape.size() - off];
      if (off <= b.shape.size() && b.shape[b.shape.size() - off] != 1) ib += idx[d] * sb[b.shape.size() - off];
    }
    const int64_t x = a.i[ia], y = b.i[ib];
    if (op == "Add") values.push_back(x + y);
    else if (op == "Sub") values.push_back(x - y);
    else if (op == "Mul") values.push_back(x * y);
    else {
      if (y == 0) throw LoomError("integer division by zero");
      values.push_back(x / y);
    }
  });
  return known_ints(shape, std::move(values));
}

void Importer::binary(const std::string& op) {
  allow_attrs({});
  require_inputs(2, 2);
  const Known* a = known(in(0));
  const Known* b = known(in(1));
  if (a && b && (!a->is_float || !b->is_float)) {
    set_known(node_->output(0), fold_int_binary(node_->op_type(), *a, *b));
    return;
  }
  emit(op, {data(in(0)), data(in(1))}, json::object(), main_output());
}

// A constant scalar exponent lowers to pow_scalar (inline code for the usual
// exponents); any other to the broadcasting pow.
void Importer::pow() {
  allow_attrs({});
  require_inputs(2, 2);
  const Known* e = known(in(1));
  if (e && e->size() == 1) {
    emit("pow_scalar", {data(in(0))}, {{"exponent", e->at(0)}}, main_output());
    return;
  }
  emit("pow", {data(in(0)), data(in(1))}, json::object(), main_output());
}

// Max/Min of any number of inputs: a chain of binary nodes.
void Importer::variadic(const std::string& op) {
  allow_attrs({});
  require_inputs(1, INT_MAX);
  const std::string output = main_output();
  if (num_inputs() == 1) {
    alias(output, in(0));
    return;
  }
  std::string acc = data(in(0));
  for (int i = 1; i < num_inputs(); ++i) {
    const bool last = i + 1 == num_inputs();
    acc = emit(op, {acc, data(in(i))}, json::object(), last ? output : "", last ? "" : "part" + std::to_string(i));
  }
}

void Importer::clip() {
  double lo = -FLT_MAX, hi = FLT_MAX;
  if (opset_ < 11) {
    allow_attrs({"min", "max"});
    require_inputs(1, 1);
    lo = attr_float("min", -FLT_MAX);
    hi = attr_float("max", FLT_MAX);
  } else {
    allow_attrs({});
    require_inputs(1, 3);
    if (has_in(1)) lo = const_scalar(1, "the lower bound");
    if (has_in(2)) hi = const_scalar(2, "the upper bound");
  }
  emit("clip", {data(in(0))}, {{"min", lo}, {"max", hi}}, main_output());
}

// pads [top, left, bottom, right] from `pads` or `auto_pad` (SAME_*: the
// output is ceil(input / stride); SAME_UPPER puts the odd pixel at the end).
std::vector<int64_t> Importer::window_pads(const Shape& x, const std::vector<int64_t>& kernel,
                                           const std::vector<int64_t>& strides,
                                           const std::vector<int64_t>& dilations) {
  const std::string auto_pad = attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    auto pads = attr_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) throw LoomError("attribute pads has " + std::to_string(pads.size()) + " values, expected 4");
    for (int64_t p : pads)
      if (p < 0) throw LoomError("attribute pads=" + ints_string(pads) + " must be non-negative");
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw LoomError("attribute auto_pad=" + auto_pad + " is not supported");
  std::vector<int64_t> pads(4);
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d], out = (in + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in);
    pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[d + 2] = total - pads[d];
  }
  return pads;
}

// A per-spatial-dim attribute of a 2-D window (strides, dilations), default 1.
std::vector<int64_t> Importer::pair_attr(const std::string& name) {
  auto v = attr_ints(name, {1, 1});
  if (v.size() != 2) throw LoomError("attribute " + name + " has " + std::to_string(v.size()) + " values, expected 2 (2-D only)");
  for (int64_t s : v)
    if (s < 1) throw LoomError("attribute " + name + "=" + ints_string(v) + " must be positive");
  return v;
}

void Importer::conv() {
  allow_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  require_inputs(2, 3);
  const auto strides = pair_attr("strides"), dilations = pair_attr("dilations");
  const int64_t group = attr_int("group", 1);
  if (group < 1) throw LoomError("attribute group=" + std::to_string(group) + " must be positive");
  const Shape x = shape_of(in(0)), w = shape_of(in(1));
  if (x.size() != 4 || w.size() != 4)
    throw LoomError("only 2-D convolution is supported (data " + shape_string(x) + ", weight " + shape_string(w) + ")");
  const std::vector<int64_t> kernel = {w[2], w[3]};
  if (attr("kernel_shape") && attr_ints("kernel_shape", {}) != kernel)
    throw LoomError("attribute kernel_shape=" + ints_string(attr_ints("kernel_shape", {})) + " differs from the weight's " +
                    ints_string(kernel));
  const auto pads = window_pads(x, kernel, strides, dilations);
  std::vector<std::string> inputs = {data(in(0)), data(in(1))};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("conv2d", inputs,
       {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}},
       main_output());
}

void Importer::pool(const std::string& op) {
  const bool max = op == "max_pool2d";
  if (max) allow_attrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else allow_attrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  require_inputs(1, 1);
  if (max && output_used(1)) throw LoomError("the Indices output is not supported");
  if (!attr("kernel_shape")) throw LoomError("attribute kernel_shape is missing");
  const auto kernel = attr_ints("kernel_shape", {});
  const auto strides = pair_attr("strides"), dilations = pair_attr("dilations");
  const Shape x = shape_of(in(0));
  if (x.size() != 4 || kernel.size() != 2)
    throw LoomError("only 2-D pooling is supported (data " + shape_string(x) + ", kernel_shape " + ints_string(kernel) + ")");
  for (int64_t k : kernel)
    if (k < 1) throw LoomError("attribute kernel_shape=" + ints_string(kernel) + " must be positive");
  const auto pads = window_pads(x, kernel, strides, dilations);
  // With auto_pad the output size is fixed by the padding rule, not rounded.
  const int64_t ceil_mode = attr_string("auto_pad", "NOTSET") == "NOTSET" ? attr_int("ceil_mode", 0) : 0;
  json attrs = {{"kernel", kernel},       {"strides", strides},     {"pads", pads},
                {"dilations", dilations}, {"ceil_mode", ceil_mode}, {"count_include_pad", attr_int("count_include_pad", 0)}};
  emit(op, {data(in(0))}, attrs, main_output());
}

void Importer::global_avg_pool() {
  allow_attrs({});
  require_inputs(1, 1);
  emit("global_avg_pool2d", {data(in(0))}, json::object(), main_output());
}

// Inference form only: the training outputs (running statistics) are refused.
void Importer::batch_norm() {
  allow_attrs({"epsilon", "momentum", "spatial", "training_mode", "is_test"});
  require_inputs(5, 5);
  if (attr_int("training_mode", 0) != 0) throw LoomError("attribute training_mode=1 is not supported (inference only)");
  if (attr_int("spatial", 1) != 1) throw LoomError("attribute spatial=0 is not supported");
  std::vector<std::string> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(data(in(i)));
  emit("batch_norm", inputs, {{"epsilon", attr_float("epsilon", 1e-5f)}}, main_output());
}

void Importer::gemm() {
  // `broadcast` (opset < 7) changes nothing for a valid model.
  allow_attrs({"alpha", "beta", "transA", "transB", "broadcast"});
  require_inputs(2, 3);
  std::vector<std::string> inputs = {data(in(0)), data(in(1))};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("gemm", inputs,
       {{"alpha", attr_float("alpha", 1.0f)},
        {"beta", attr_float("beta", 1.0f)},
        {"trans_a", attr_int("transA", 0)},
        {"trans_b", attr_int("transB", 0)}},
       main_output());
}

void Importer::matmul() {
  allow_attrs({});
  require_inputs(2, 2);
  emit("matmul", {data(in(0)), data(in(1))}, json::object(), main_output());
}

void Importer::flatten() {
  allow_attrs({"axis"});
  require_inputs(1, 1);
  const int64_t axis = attr_int("axis", 1);
  if (const Known* k = known(in(0))) {
    const int64_t rank = static_cast<int64_t>(k->shape.size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) throw LoomError("attribute axis=" + std::to_string(axis) + " is out of range");
    Known out = *k;
    out.shape = {num_elements(Shape(k->shape.begin(), k->shape.begin() + a)),
                 num_elements(Shape(k->shape.begin() + a, k->shape.end()))};
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("flatten", {data(in(0))}, {{"axis", axis}}, main_output());
}

void Importer::reshape() {
  std::vector<int64_t> spec;
  if (opset_ < 5) {
    allow_attrs({"shape"});
    require_inputs(1, 1);
    spec = attr_ints("shape", {});
  } else {
    allow_attrs({"allowzero"});
    require_inputs(2, 2);
    spec = const_ints(1, "the shape");
    if (attr_int("allowzero", 0) != 0 && std::count(spec.begin(), spec.end(), 0))
      throw LoomError("attribute allowzero=1 with a 0 in the shape is not supported");
  }
  Shape sizes;
  for (int64_t v : spec) sizes.push_back(v < 0 ? 1 : v);
  checked_elements(sizes, "the shape " + ints_string(spec));
  if (const Known* k = known(in(0))) {
    Known out = *k;
    out.shape = reshape_target(k->shape, spec);
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("reshape", {data(in(0))}, {{"shape", spec}}, main_output());
}

void Importer::transpose() {
  allow_attrs({"perm"});
  require_inputs(1, 1);
  const auto perm = attr_ints("perm", {});
  if (const Known* k = known(in(0))) {
    const size_t rank = k->shape.size();
    std::vector<int64_t> p = perm;
    if (p.empty())
      for (size_t d = rank; d-- > 0;) p.push_back(static_cast<int64_t>(d));
    std::vector<int64_t> sorted;
    for (int64_t d : p) sorted.push_back(normalized_axis(d, rank));
    std::sort(sorted.begin(), sorted.end());
    for (size_t d = 0; d < sorted.size(); ++d)
      if (sorted.size() != rank || sorted[d] != static_cast<int64_t>(d))
        throw LoomError("attribute perm=" + ints_string(perm) + " is not a permutation of " + std::to_string(rank) + " dims");
    Shape shape;
    for (int64_t d : p) shape.push_back(k->shape[normalized_axis(d, rank)]);
    const auto st = strides_of(k->shape);
    std::vector<int64_t> index;
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      int64_t j = 0;
      for (size_t d = 0; d < rank; ++d) j += idx[d] * st[normalized_axis(p[d], rank)];
      index.push_back(j);
    });
    set_known(node_->output(0), take(*k, shape, index));
    return;
  }
  emit("transpose", {data(in(0))}, {{"perm", perm}}, main_output());
}

void Importer::concat() {
  allow_attrs({"axis"});
  require_inputs(1, INT_MAX);
  if (!attr("axis")) throw LoomError("attribute axis is missing");
  const int64_t axis = attr_int("axis", 0);
  std::vector<const Known*> parts;
  bool all_known = true, any_int = false;
  for (int i = 0; i < num_inputs(); ++i) {
    const Known* k = known(in(i));
    parts.push_back(k);
    all_known = all_known && k;
    any_int = any_int || (k && !k->is_float);
  }
  if (!all_known || !any_int) {
    std::vector<std::string> inputs;
    for (int i = 0; i < num_inputs(); ++i) inputs.push_back(data(in(i)));
    emit("concat", inputs, {{"axis", axis}}, main_output());
    return;
  }
  // Shape data: the parts stacked into one tensor, then taken in output order.
  const int64_t rank = static_cast<int64_t>(parts[0]->shape.size());
  const int64_t a = normalized_axis(axis, rank);
  Known all = known_ints({}, {});
  Shape shape = parts[0]->shape;
  shape[a] = 0;
  std::vector<int64_t> offsets;
  for (const Known* k : parts) {
    if (k->is_float) throw LoomError("mixes integer and float constants");
    if (static_cast<int64_t>(k->shape.size()) != rank) throw LoomError("inputs of different ranks");
    for (int64_t d = 0; d < rank; ++d)
      if (d != a && k->shape[d] != parts[0]->shape[d])
        throw LoomError("inputs of shapes " + shape_string(parts[0]->shape) + " and " + shape_string(k->shape) +
                        " differ outside the axis");
    offsets.push_back(static_cast<int64_t>(all.i.size()));
    all.i.insert(all.i.end(), k->i.begin(), k->i.end());
    shape[a] += k->shape[a];
  }
  const int64_t outer = num_elements(Shape(shape.begin(), shape.begin() + a));
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t chunk = num_elements(Shape(parts[p]->shape.begin() + a, parts[p]->shape.end()));
      for (int64_t j = 0; j < chunk; ++j) index.push_back(offsets[p] + o * chunk + j);
    }
  set_known(node_->output(0), take(all, shape, index));
}

// Before opset 13 Softmax flattens the input to 2-D at `axis` and normalizes
// over everything from `axis` on, which matches Loom's per-axis softmax only
// at the last axis.
void Importer::softmax() {
  allow_attrs({"axis"});
  require_inputs(1, 1);
  const int64_t rank = static_cast<int64_t>(shape_of(in(0)).size());
  const int64_t axis = attr_int("axis", opset_ < 13 ? 1 : -1);
  const int64_t a = normalized_axis(axis, rank);
  if (opset_ < 13 && a != rank - 1)
    throw LoomError("axis=" + std::to_string(axis) + " of a " + std::to_string(rank) + "-D input under opset " +
                    std::to_string(opset_) + " normalizes over the flattened dims from the axis on (not supported; only the last axis)");
  emit("softmax", {data(in(0))}, {{"axis", axis}}, main_output());
}

// `axes` is an attribute up to `axes_input_opset`, an input from then on.
void Importer::reduce(const std::string& op, int64_t axes_input_opset) {
  const bool axes_input = opset_ >= axes_input_opset;
  if (axes_input) {
    allow_attrs({"keepdims", "noop_with_empty_axes"});
    require_inputs(1, 2);
  } else {
    allow_attrs({"axes", "keepdims"});
    require_inputs(1, 1);
  }
  const std::vector<int64_t> axes = axes_input ? (has_in(1) ? const_ints(1, "the axes") : std::vector<int64_t>{})
                                               : attr_ints("axes", {});
  if (axes.empty() && attr_int("noop_with_empty_axes", 0) != 0) {
    alias(main_output(), in(0));
    return;
  }
  // Loom's empty axes reduce over every axis, as ONNX's missing ones do.
  emit(op, {data(in(0))}, {{"axes", axes}, {"keepdims", attr_int("keepdims", 1)}}, main_output());
}

// Y is layer_norm; the optional Mean and InvStdDev outputs are spelled with
// reductions when something reads them.
void Importer::layer_norm() {
  allow_attrs({"axis", "epsilon", "stash_type"});
  require_inputs(2, 3);
  const int64_t axis = attr_int("axis", -1);
  const float epsilon = attr_float("epsilon", 1e-5f);
  const std::string x = data(in(0));
  std::vector<std::string> inputs = {x, data(in(1))};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("layer_norm", inputs, {{"axis", axis}, {"epsilon", epsilon}}, output0());
  if (!output_used(1) && !output_used(2)) return;
  const int64_t rank = static_cast<int64_t>(shape_of(in(0)).size());
  std::vector<int64_t> axes;
  for (int64_t d = normalized_axis(axis, rank); d < rank; ++d) axes.push_back(d);
  const json reduce_attrs = {{"axes", axes}, {"keepdims", 1}};
  const std::string mean = emit("reduce_mean", {x}, reduce_attrs, output_used(1) ? node_->output(1) : "", "mean");
  if (!output_used(2)) return;
  const std::string centred = emit("sub", {x, mean}, json::object(), "", "centred");
  const std::string square = emit("mul", {centred, centred}, json::object(), "", "square");
  const std::string var = emit("reduce_mean", {square}, reduce_attrs, "", "var");
  const std::string eps = fresh_value(node_name_ + "_epsilon");
  out_.constants[eps] = Constant{{}, {epsilon}};
  defined_.insert(eps);
  const std::string padded = emit("add", {var, eps}, json::object(), "", "var_eps");
  emit("pow_scalar", {padded}, {{"exponent", -0.5}}, node_->output(2), "inv_std_dev");
}

void Importer::identity() {
  allow_attrs({});
  require_inputs(1, 1);
  alias(node_->output(0), in(0));
}

void Importer::dropout() {
  allow_attrs({"ratio", "seed", "is_test"});
  require_inputs(1, 3);
  if (output_used(1)) throw LoomError("the mask output is not supported (inference only)");
  if (has_in(2) && const_scalar(2, "training_mode") != 0) throw LoomError("training_mode=1 is not supported (inference only)");
  alias(node_->output(0), in(0));
}

void Importer::constant() {
  allow_attrs({"value", "value_float", "value_floats", "value_int", "value_ints"});
  require_inputs(0, 0);
  const auto* a = node_->attribute_size() == 1 ? &node_->attribute(0) : nullptr;
  if (!a) throw LoomError("expected exactly one value attribute");
  Known k;
  if (a->name() == "value") {
    expect_type(*a, onnx::AttributeProto::TENSOR, "a tensor");
    k = known_from_proto(a->t());
  } else if (a->name() == "value_float") {
    k.f = {attr_float("value_float", 0)};
  } else if (a->name() == "value_floats") {
    expect_type(*a, onnx::AttributeProto::FLOATS, "a list of floats");
    k.f.assign(a->floats().begin(), a->floats().end());
    k.shape = {static_cast<int64_t>(k.f.size())};
  } else if (a->name() == "value_int") {
    k = known_ints({}, {attr_int("value_int", 0)});
  } else {
    const auto v = attr_ints("value_ints", {});
    k = known_ints({static_cast<int64_t>(v.size())}, v);
  }
  set_known(node_->output(0), std::move(k));
}

// Folded from the static shape.
void Importer::shape() {
  allow_attrs({"start", "end"});
  require_inputs(1, 1);
  const Shape s = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(attr_int("start", 0)), end = clamp(attr_int("end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  set_known(node_->output(0), known_ints({static_cast<int64_t>(dims.size())}, dims));
}

// Folded when data and indices are constants (shape computations); Gather of
// data is not a Loom op.
void Importer::gather() {
  allow_attrs({"axis"});
  require_inputs(2, 2);
  const Known* d = known(in(0));
  if (!d) throw LoomError("Gather of non-constant data is not supported (only constant and shape data are folded)");
  const std::vector<int64_t> indices = const_ints(1, "the indices");
  const Shape index_shape = constant_data(in(1))->shape;
  const int64_t rank = static_cast<int64_t>(d->shape.size());
  const int64_t axis = normalized_axis(attr_int("axis", 0), rank);
  const int64_t n = d->shape[axis];
  const int64_t outer = num_elements(Shape(d->shape.begin(), d->shape.begin() + axis));
  const int64_t inner = num_elements(Shape(d->shape.begin() + axis + 1, d->shape.end()));
  Shape shape(d->shape.begin(), d->shape.begin() + axis);
  shape.insert(shape.end(), index_shape.begin(), index_shape.end());
  shape.insert(shape.end(), d->shape.begin() + axis + 1, d->shape.end());
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t v : indices) {
      const int64_t j = v < 0 ? v + n : v;
      if (j < 0 || j >= n) throw LoomError("index " + std::to_string(v) + " is out of range for size " + std::to_string(n));
      for (int64_t i = 0; i < inner; ++i) index.push_back((o * n + j) * inner + i);
    }
  set_known(node_->output(0), take(*d, shape, index));
}

void Importer::unsqueeze() {
  std::vector<int64_t> axes;
  if (opset_ < 13) {
    allow_attrs({"axes"});
    require_inputs(1, 1);
    axes = attr_ints("axes", {});
  } else {
    allow_attrs({});
    require_inputs(2, 2);
    axes = const_ints(1, "the axes");
  }
  const Shape shape = unsqueezed(shape_of(in(0)), axes);
  if (const Known* k = known(in(0))) {
    Known out = *k;
    out.shape = shape;
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("reshape", {data(in(0))}, {{"shape", shape}}, main_output());
}

void Importer::squeeze() {
  std::vector<int64_t> axes;
  if (opset_ < 13) {
    allow_attrs({"axes"});
    require_inputs(1, 1);
    axes = attr_ints("axes", {});
  } else {
    allow_attrs({});
    require_inputs(1, 2);
    if (has_in(1)) axes = const_ints(1, "the axes");
  }
  const Shape shape = squeezed(shape_of(in(0)), axes);
  if (const Known* k = known(in(0))) {
    Known out = *k;
    out.shape = shape;
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("reshape", {data(in(0))}, {{"shape", shape}}, main_output());
}

// Constants convert between float and integers; on data only float → float
// (a no-op) is accepted.
void Importer::cast() {
  allow_attrs({"to", "saturate"});
  require_inputs(1, 1);
  const int64_t to = attr_int("to", onnx::TensorProto::UNDEFINED);
  const bool to_float = to == onnx::TensorProto::FLOAT;
  const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32;
  if (const Known* k = known(in(0)); k && (to_float || to_int)) {
    Known out;
    out.shape = k->shape;
    out.is_float = to_float;
    for (int64_t j = 0; j < k->size(); ++j) {
      if (to_float) out.f.push_back(static_cast<float>(k->at(j)));
      else out.i.push_back(k->is_float ? static_cast<int64_t>(k->f[j]) : k->i[j]);
    }
    set_known(node_->output(0), std::move(out));
    return;
  }
  const int32_t from = elem_type(in(0));
  if (to_float && (from == onnx::TensorProto::FLOAT || from == onnx::TensorProto::UNDEFINED) && !known(in(0))) {
    alias(main_output(), in(0));
    return;
  }
  throw LoomError("Cast to " + type_name(static_cast<int32_t>(to)) + " is not supported (only float32 data)");
}

// Folded on constants (shape computations); slicing data is not a Loom op.
void Importer::slice() {
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset_ < 10) {
    allow_attrs({"starts", "ends", "axes"});
    require_inputs(1, 1);
    starts = attr_ints("starts", {});
    ends = attr_ints("ends", {});
    axes = attr_ints("axes", {});
  } else {
    allow_attrs({});
    require_inputs(3, 5);
    starts = const_ints(1, "the starts");
    ends = const_ints(2, "the ends");
    if (has_in(3)) axes = const_ints(3, "the axes");
    if (has_in(4)) steps = const_ints(4, "the steps");
  }
  const Known* d = known(in(0));
  if (!d) throw LoomError("Slice of non-constant data is not supported (only constant and shape data are folded)");
  const int64_t rank = static_cast<int64_t>(d->shape.size());
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw LoomError("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  Shape shape = d->shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normalized_axis(axes[k], rank), dim = d->shape[a], st = steps[k];
    if (st == 0) throw LoomError("a step of 0");
    if (dim == 0) {
      shape[a] = 0;
      continue;
    }
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = std::max<int64_t>(0, (e - s + st - 1) / st);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = std::max<int64_t>(0, (s - e - st - 1) / -st);
    }
    first[a] = s;
    step[a] = st;
  }
  const auto strides = strides_of(d->shape);
  std::vector<int64_t> index;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t j = 0;
    for (int64_t a = 0; a < rank; ++a) j += (first[a] + idx[a] * step[a]) * strides[a];
    index.push_back(j);
  });
  set_known(node_->output(0), take(*d, shape, index));
}

void Importer::constant_of_shape() {
  allow_attrs({"value"});
  require_inputs(1, 1);
  const std::vector<int64_t> dims = const_ints(0, "the shape");
  checked_elements(dims, "the shape");
  Known fill;
  fill.f = {0.0f};
  if (const auto* a = attr("value")) {
    expect_type(*a, onnx::AttributeProto::TENSOR, "a tensor");
    fill = known_from_proto(a->t());
    if (fill.size() != 1) throw LoomError("attribute value must have one element");
  }
  Known out;
  out.is_float = fill.is_float;
  out.shape = dims;
  const int64_t n = checked_elements(out.shape, "the shape");
  if (fill.is_float) out.f.assign(n, fill.f[0]);
  else out.i.assign(n, fill.i[0]);
  set_known(node_->output(0), std::move(out));
}

// Only the no-op form: exporters emit Pad with zero pads before AveragePool.
void Importer::pad() {
  std::vector<int64_t> pads;
  if (opset_ < 11) {
    allow_attrs({"mode", "pads", "value"});
    require_inputs(1, 1);
    pads = attr_ints("pads", {});
  } else {
    allow_attrs({"mode"});
    require_inputs(2, 4);
    pads = const_ints(1, "the pads");
    if (has_in(3)) throw LoomError("the axes input is not supported");
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
    throw LoomError("non-zero pads " + ints_string(pads) + " are not supported (only as a Conv or pool attribute)");
  alias(main_output(), in(0));
}

const std::map<std::string, Importer::Converter>& Importer::converters() {
  static const std::map<std::string, Converter> table = {
      {"Abs", [](Importer& m) { m.unary("abs"); }},
      {"Add", [](Importer& m) { m.binary("add"); }},
      {"AveragePool", [](Importer& m) { m.pool("avg_pool2d"); }},
      {"BatchNormalization", [](Importer& m) { m.batch_norm(); }},
      {"Cast", [](Importer& m) { m.cast(); }},
      {"Clip", [](Importer& m) { m.clip(); }},
      {"Concat", [](Importer& m) { m.concat(); }},
      {"Constant", [](Importer& m) { m.constant(); }},
      {"ConstantOfShape", [](Importer& m) { m.constant_of_shape(); }},
      {"Conv", [](Importer& m) { m.conv(); }},
      {"Div", [](Importer& m) { m.binary("div"); }},
      {"Dropout", [](Importer& m) { m.dropout(); }},
      {"Erf", [](Importer& m) { m.unary("erf"); }},
      {"Exp", [](Importer& m) { m.unary("exp"); }},
      {"Flatten", [](Importer& m) { m.flatten(); }},
      {"Gather", [](Importer& m) { m.gather(); }},
      {"Gelu", [](Importer& m) { m.gelu(); }},
      {"Gemm", [](Importer& m) { m.gemm(); }},
      {"GlobalAveragePool", [](Importer& m) { m.global_avg_pool(); }},
      {"Identity", [](Importer& m) { m.identity(); }},
      {"LayerNormalization", [](Importer& m) { m.layer_norm(); }},
      {"Log", [](Importer& m) { m.unary("log"); }},
      {"MatMul", [](Importer& m) { m.matmul(); }},
      {"Max", [](Importer& m) { m.variadic("max"); }},
      {"MaxPool", [](Importer& m) { m.pool("max_pool2d"); }},
      {"Min", [](Importer& m) { m.variadic("min"); }},
      {"Mul", [](Importer& m) { m.binary("mul"); }},
      {"Neg", [](Importer& m) { m.unary("neg"); }},
      {"Pad", [](Importer& m) { m.pad(); }},
      {"Pow", [](Importer& m) { m.pow(); }},
      {"ReduceMax", [](Importer& m) { m.reduce("reduce_max", 18); }},
      {"ReduceMean", [](Importer& m) { m.reduce("reduce_mean", 18); }},
      {"ReduceSum", [](Importer& m) { m.reduce("reduce_sum", 13); }},
      {"Relu", [](Importer& m) { m.unary("relu"); }},
      {"Reshape", [](Importer& m) { m.reshape(); }},
      {"Shape", [](Importer& m) { m.shape(); }},
      {"Sigmoid", [](Importer& m) { m.unary("sigmoid"); }},
      {"Slice", [](Importer& m) { m.slice(); }},
      {"Softmax", [](Importer& m) { m.softmax(); }},
      {"Sqrt", [](Importer& m) { m.unary("sqrt"); }},
      {"Squeeze", [](Importer& m) { m.squeeze(); }},
      {"Sub", [](Importer& m) { m.binary("sub"); }},
      {"Tanh", [](Importer& m) { m.unary("tanh"); }},
      {"Transpose", [](Importer& m) { m.transpose(); }},
      {"Unsqueeze", [](Importer& m) { m.unsqueeze(); }},
  };
  return table;
}

// Names come from the file and may hold any bytes: control characters are
// escaped so that every message stays one line.
std::string one_line(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out;
}

// Every problem as one LoomError line prefixed by `what`; anything else
// thrown underneath (a library's exception) is reported the same way rather
// than escaping.
template <class F>
auto with_prefix(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw LoomError(one_line(what + ": " + e.what()));
  }
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& what, const OnnxImportOptions& options) {
  return with_prefix(what, [&] {
    onnx::ModelProto model = parse_model(bytes);
    Graph g = Importer(model, options).run();
    g.validate();
    return g;
  });
}

Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  return import_onnx_bytes(read_file(path), path, options);
}

const std::vector<std::string>& onnx_importable_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> out;
    for (const auto& [op, convert] : Importer::converters()) out.push_back(op);
    return out;
  }();
  return ops;
}

OnnxModelInfo read_onnx_model_info(const std::string& path) {
  const std::string bytes = read_file(path);
  return with_prefix(path, [&] {
    onnx::ModelProto model = parse_model(bytes);
    OnnxModelInfo info;
    std::set<std::string> initializers;
    for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
    for (const auto& v : model.graph().input())
      if (!initializers.count(v.name())) info.inputs.push_back(v.name());
    for (const auto& v : model.graph().output()) info.outputs.push_back(v.name());
    for (const auto& n : model.graph().node())
      info.op_types.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + ":" + n.op_type());
    for (const auto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") info.opset = o.version();
    return info;
  });
}

std::vector<float> read_onnx_tensor_file(const std::string& path, Shape* shape) {
  const std::string bytes = read_file(path);
  return with_prefix(path, [&] {
    onnx::TensorProto t;
    if (!parse_message(bytes, &t)) throw LoomError("not a valid TensorProto (protobuf parse failed)");
    if (t.data_type() != onnx::TensorProto::FLOAT)
      throw LoomError("tensor of type " + type_name(t.data_type()) + " (only float32 is supported)");
    Known k = known_from_proto(t);
    if (shape) *shape = k.shape;
    return std::move(k.f);
  });
}

}  // namespace loom::graph
