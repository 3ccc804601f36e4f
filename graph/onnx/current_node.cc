// The node being converted, as the per-op mappings (graph/onnx/ops_*.cc)
// see it: its inputs, outputs and attributes, each checked with a one-line
// message, its constant inputs, and the Loom nodes, known values and aliases
// it becomes.
#include <string>
#include <utility>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

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
  // The output's shape, known from here on to every later node (ONNX's
  // inference may not know it where shapes came from folded computations).
  if (const OpDef* def = find_op(op)) {
    std::vector<Shape> in_shapes;
    for (const auto& i : inputs) in_shapes.push_back(shape_of(i));
    inferred_[output] = def->infer_shape(in_shapes, resolve_attrs(*def, attrs));
  }
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

}  // namespace loom::graph::onnx_detail
