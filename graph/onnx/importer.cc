// ONNX → Loom graph import (graph/onnx_import.h): the walk over the model
// (setup, the checks made before any node, the nodes in order, the outputs
// and inputs), the bookkeeping of values (aliases, known values, fresh
// names), the table of mapped ops, and the public functions, which report
// every problem as one line.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <set>
#include <utility>

#include <onnx/shape_inference/implementation.h>

#include "graph/onnx/importer.h"
#include "ir/error.h"

namespace loom::graph {

namespace onnx_detail {

Importer::Importer(onnx::ModelProto& model, const OnnxImportOptions& options)
    : model_(model), graph_(model.graph()) {
  read_opset();
  pin_input_shapes(options.input_shapes);
  if (inference_is_safe()) infer_shapes();
  collect_values();
  load_known_inputs(options);
}

// Each pinned input's dims written into the model; the cached shapes of
// other values (value_info, outputs) may carry the dynamic dims and are
// dropped, so that inference derives them from the pinned inputs.
void Importer::pin_input_shapes(const InputShapes& shapes) {
  if (shapes.empty()) return;
  onnx::GraphProto& g = *model_.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::string names;
  for (const auto& v : g.input())
    if (!initializers.count(v.name())) names += (names.empty() ? "'" : ", '") + v.name() + "'";
  for (const auto& [name, shape] : shapes) {
    onnx::ValueInfoProto* input = nullptr;
    for (auto& v : *g.mutable_input())
      if (v.name() == name && !initializers.count(name)) input = &v;
    if (!input) throw LoomError("no input '" + name + "' to give a shape (the inputs: " + names + ")");
    if (!input->type().has_tensor_type()) throw LoomError("input '" + name + "': not a tensor");
    auto* dims = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (dims->dim_size() != 0 && dims->dim_size() != static_cast<int>(shape.size()))
      throw LoomError("input '" + name + "' has " + std::to_string(dims->dim_size()) + " dims, the shape " +
                      shape_string(shape) + " " + std::to_string(shape.size()));
    for (int d = 0; d < dims->dim_size(); ++d)
      if (dims->dim(d).has_dim_value() && dims->dim(d).dim_value() != shape[d])
        throw LoomError("input '" + name + "': dim " + std::to_string(d) + " is " +
                        std::to_string(dims->dim(d).dim_value()) + " in the model, not " + std::to_string(shape[d]));
    dims->clear_dim();
    for (int64_t v : shape) dims->add_dim()->set_dim_value(v);
  }
  g.clear_value_info();
  for (auto& o : *g.mutable_output())
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
}

void Importer::read_opset() {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
}

// ONNX's shape inference divides by window attributes unchecked (a zero
// stride or group is a SIGFPE) and follows a node's input to the value that
// defines it unchecked (an undefined one is a null dereference), so it runs
// only on models the importer can take as a whole, with sane window
// attributes, graph inputs of a known tensor type (an input without one
// is a null dereference too) and every input defined before it is read; on
// the others the import fails at a node anyway, with that node's message.
bool Importer::inference_is_safe() const {
  std::set<std::string> defined;
  for (const auto& v : graph_.input()) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return false;
    defined.insert(v.name());
  }
  for (const auto& t : graph_.initializer()) defined.insert(t.name());
  for (const auto& n : graph_.node()) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || !converters().count(n.op_type())) return false;
    for (const auto& in : n.input())
      if (!in.empty() && !defined.count(in)) return false;  // "" is an omitted optional input
    for (const auto& out : n.output()) defined.insert(out);
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
//
// ONNX's inference trusts the model beyond what inference_is_safe() checks
// (a Conv whose weight has fewer dimensions than its input reads past them),
// so it runs in a child process: a model it crashes on (or hangs on, 30 s)
// only goes without inferred shapes. The child sends back the graph's
// value_info and outputs, which is all inference changes.
void Importer::infer_shapes() {
  // The schema registry is built on first use: once, here, not in every child.
  onnx::ISchemaRegistry* schemas = onnx::OpSchemaRegistry::Instance();
  schemas->GetSchema("Relu", opset_ > 0 ? static_cast<int>(opset_) : 14, "");
  int fds[2];
  if (::pipe(fds) != 0) return;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Die as a plain process would (not in a fuzzer's or sanitizer's
    // handler, which would report the parent's input as a crash).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
    ::alarm(30);
    std::string out;
    try {
      onnx::shape_inference::InferShapes(model_, schemas,
                                         onnx::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0,
                                                                     /*enable_data_propagation=*/true));
      onnx::GraphProto inferred;
      *inferred.mutable_value_info() = model_.graph().value_info();
      *inferred.mutable_output() = model_.graph().output();
      if (!inferred.SerializeToString(&out)) ::_exit(1);
    } catch (...) {
      ::_exit(1);
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t w = ::write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) ::_exit(1);
      done += static_cast<size_t>(w);
    }
    ::_exit(0);  // no atexit handlers: they belong to the parent
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[65536];
  while (true) {
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r > 0) bytes.append(buf, static_cast<size_t>(r));
    else if (r == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  onnx::GraphProto inferred;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !inferred.ParseFromString(bytes)) return;
  onnx::GraphProto& graph = *model_.mutable_graph();
  graph.mutable_value_info()->Swap(inferred.mutable_value_info());
  graph.mutable_output()->Swap(inferred.mutable_output());
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
      if (d.has_dim_param()) {
        std::string example;
        for (const auto& e : t->tensor_type().shape().dim())
          example += (example.empty() ? "" : "x") + (e.has_dim_value() ? std::to_string(e.dim_value()) : "N");
        throw LoomError("input '" + name + "': dynamic dimension '" + d.dim_param() + "' (pin it: --shape " + name +
                        "=" + example + ", or the config's \"input_shapes\")");
      }
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
    // Recurrent layers may leave their first output (the whole sequence) out.
    const bool optional_first = op == "LSTM" || op == "GRU";
    if (node_->output_size() == 0 || (node_->output(0).empty() && !optional_first))
      throw LoomError("output 0 has no name");
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
      // A computed or folded value is a float tensor whatever the ONNX type
      // says (an ArgMax's int64 index, a comparison's bool, integer shape
      // arithmetic).
      if (!defined_.count(resolve(o.name())) && !known(o.name())) check_float(o.name());
      if (const Known* k = known(o.name()); k && k->size() == 0)
        throw LoomError("an empty tensor (shape " + shape_string(k->shape) + ") is not supported");
      out_.outputs.push_back(data(o.name()));
    } catch (const LoomError& e) {
      throw LoomError("output '" + o.name() + "': " + e.what());
    }
  }
}

void Importer::add_inputs() {
  for (const auto& name : graph_inputs_)
    if (inputs_read_.count(name)) {
      auto it = integer_inputs_.find(name);
      out_.inputs.push_back({name, shape_of(name), it == integer_inputs_.end() ? 0 : it->second});
    }
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

// Booleans pass too: Loom carries them as float tensors of ones and zeros.
void Importer::check_float(const std::string& value) {
  const int32_t t = elem_type(value);
  if (t != onnx::TensorProto::UNDEFINED && t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::BOOL)
    throw LoomError("value '" + value + "' has type " + type_name(t) + " (only float32 tensors are supported)");
  const onnx::TypeProto* type = type_of(value);
  if (type && !type->has_tensor_type() && type->value_case() != onnx::TypeProto::VALUE_NOT_SET)
    throw LoomError("value '" + value + "' is not a tensor (only float32 tensors are supported)");
}

Shape Importer::shape_of(const std::string& name) {
  if (const Known* k = constant_data(name)) return k->shape;
  if (auto it = inferred_.find(resolve(name)); it != inferred_.end()) return it->second;
  if (auto it = out_.constants.find(resolve(name)); it != out_.constants.end()) return it->second.shape;
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
    // Integer inputs (token ids, masks) are carried as floats.
    const int32_t t = elem_type(n);
    if (t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32) integer_inputs_.emplace(n, 2);
    else check_float(n);
    inputs_read_.insert(n);
    defined_.insert(n);
    return n;
  }
  if (const Known* k = known(n)) {
    // Integer and boolean constants read as data (masks, indices compared
    // with data) become float constants: exact up to 2^24.
    std::vector<float> values = k->f;
    if (!k->is_float)
      for (int64_t v : k->i) {
        if (v > (int64_t{1} << 24) || v < -(int64_t{1} << 24))
          throw LoomError("value '" + n + "' is integer data with " + std::to_string(v) +
                          ", beyond what float32 holds exactly (only float32 tensors are supported)");
        values.push_back(static_cast<float>(v));
      }
    out_.constants[n] = Constant{k->shape, std::move(values)};
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

// ---- the mapped ops -------------------------------------------------------------

const std::map<std::string, Importer::Converter>& Importer::converters() {
  static const std::map<std::string, Converter> table = {
      {"Abs", [](Importer& m) { m.unary("abs"); }},
      {"Add", [](Importer& m) { m.binary("add"); }},
      {"ArgMax", [](Importer& m) { m.arg_extreme(true); }},
      {"ArgMin", [](Importer& m) { m.arg_extreme(false); }},
      {"And", [](Importer& m) { m.compare(); }},
      {"AveragePool", [](Importer& m) { m.pool("avg_pool2d"); }},
      {"BatchNormalization", [](Importer& m) { m.batch_norm(); }},
      {"Cast", [](Importer& m) { m.cast(); }},
      {"Clip", [](Importer& m) { m.clip(); }},
      {"Concat", [](Importer& m) { m.concat(); }},
      {"Constant", [](Importer& m) { m.constant(); }},
      {"ConstantOfShape", [](Importer& m) { m.constant_of_shape(); }},
      {"Conv", [](Importer& m) { m.conv(); }},
      {"ConvTranspose", [](Importer& m) { m.conv_transpose(); }},
      {"Div", [](Importer& m) { m.binary("div"); }},
      {"Dropout", [](Importer& m) { m.dropout(); }},
      {"Einsum", [](Importer& m) { m.einsum(); }},
      {"Elu", [](Importer& m) { m.activation("elu", {{"alpha", 1.0f}}); }},
      {"Equal", [](Importer& m) { m.compare(); }},
      {"Erf", [](Importer& m) { m.unary("erf"); }},
      {"Exp", [](Importer& m) { m.unary("exp"); }},
      {"Expand", [](Importer& m) { m.expand(); }},
      {"Flatten", [](Importer& m) { m.flatten(); }},
      {"Gather", [](Importer& m) { m.gather(); }},
      {"Gelu", [](Importer& m) { m.gelu(); }},
      {"Gemm", [](Importer& m) { m.gemm(); }},
      {"GlobalAveragePool", [](Importer& m) { m.global_avg_pool(); }},
      {"Greater", [](Importer& m) { m.compare(); }},
      {"GroupNormalization", [](Importer& m) { m.group_norm(); }},
      {"GRU", [](Importer& m) { m.recurrent(false); }},
      {"GreaterOrEqual", [](Importer& m) { m.compare(); }},
      {"HardSigmoid", [](Importer& m) { m.activation("hard_sigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}}); }},
      {"HardSwish", [](Importer& m) { m.unary("hard_swish"); }},
      {"Identity", [](Importer& m) { m.identity(); }},
      {"InstanceNormalization", [](Importer& m) { m.instance_norm(); }},
      {"LayerNormalization", [](Importer& m) { m.layer_norm(); }},
      {"LeakyRelu", [](Importer& m) { m.activation("leaky_relu", {{"alpha", 0.01f}}); }},
      {"Less", [](Importer& m) { m.compare(); }},
      {"LSTM", [](Importer& m) { m.recurrent(true); }},
      {"LessOrEqual", [](Importer& m) { m.compare(); }},
      {"Log", [](Importer& m) { m.unary("log"); }},
      {"MatMul", [](Importer& m) { m.matmul(); }},
      {"Max", [](Importer& m) { m.variadic("max"); }},
      {"MaxPool", [](Importer& m) { m.pool("max_pool2d"); }},
      {"Min", [](Importer& m) { m.variadic("min"); }},
      {"Mod", [](Importer& m) { m.mod(); }},
      {"Mul", [](Importer& m) { m.binary("mul"); }},
      {"Neg", [](Importer& m) { m.unary("neg"); }},
      {"Not", [](Importer& m) { m.logical_not(); }},
      {"Or", [](Importer& m) { m.compare(); }},
      {"Pad", [](Importer& m) { m.pad(); }},
      {"Pow", [](Importer& m) { m.pow(); }},
      {"PRelu", [](Importer& m) { m.prelu(); }},
      {"Range", [](Importer& m) { m.range(); }},
      {"Reciprocal", [](Importer& m) { m.unary("reciprocal"); }},
      {"ReduceL2", [](Importer& m) { m.reduce("reduce_l2", 18); }},
      {"ReduceMax", [](Importer& m) { m.reduce("reduce_max", 18); }},
      {"ReduceMean", [](Importer& m) { m.reduce("reduce_mean", 18); }},
      {"ReduceMin", [](Importer& m) { m.reduce("reduce_min", 18); }},
      {"ReduceSum", [](Importer& m) { m.reduce("reduce_sum", 13); }},
      {"Relu", [](Importer& m) { m.unary("relu"); }},
      {"Reshape", [](Importer& m) { m.reshape(); }},
      {"Resize", [](Importer& m) { m.resize(); }},
      {"Shape", [](Importer& m) { m.shape(); }},
      {"ScatterND", [](Importer& m) { m.scatter_nd(); }},
      {"Selu", [](Importer& m) { m.activation("selu", {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}); }},
      {"Sigmoid", [](Importer& m) { m.unary("sigmoid"); }},
      {"Slice", [](Importer& m) { m.slice(); }},
      {"Softmax", [](Importer& m) { m.softmax(); }},
      {"Softplus", [](Importer& m) { m.unary("softplus"); }},
      {"Softsign", [](Importer& m) { m.unary("softsign"); }},
      {"Split", [](Importer& m) { m.split(); }},
      {"Sqrt", [](Importer& m) { m.unary("sqrt"); }},
      {"Squeeze", [](Importer& m) { m.squeeze(); }},
      {"Sub", [](Importer& m) { m.binary("sub"); }},
      {"Tanh", [](Importer& m) { m.unary("tanh"); }},
      {"Tile", [](Importer& m) { m.tile(); }},
      {"Transpose", [](Importer& m) { m.transpose(); }},
      {"Unsqueeze", [](Importer& m) { m.unsqueeze(); }},
      {"Where", [](Importer& m) { m.where(); }},
  };
  return table;
}

}  // namespace onnx_detail

namespace {

using onnx_detail::Importer;
using onnx_detail::Known;
using onnx_detail::known_from_proto;
using onnx_detail::parse_message;
using onnx_detail::read_file;
using onnx_detail::type_name;

onnx::ModelProto parse_model(const std::string& bytes) {
  onnx::ModelProto model;
  if (!parse_message(bytes, &model)) throw LoomError("not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw LoomError("not a valid ONNX model (no graph)");
  return model;
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
    Known k = known_from_proto(t);
    if (shape) *shape = k.shape;
    if (!k.is_float)
      for (int64_t v : k.i) k.f.push_back(static_cast<float>(v));  // bool: ones and zeros; integers as floats
    return std::move(k.f);
  });
}

}  // namespace loom::graph
