// ONNX arithmetic onto Loom ops: element-wise (unary ops, Gelu, the binary
// ops with integer shape arithmetic folded, Pow, Max/Min, Clip), reductions
// and matrix products (Gemm, MatMul).
#include <cfloat>
#include <climits>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

namespace {

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

}  // namespace

void Importer::unary(const std::string& op) {
  allow_attrs({});
  require_inputs(1, 1);
  if ((op == "neg" || op == "abs") && fold_unary(op)) return;
  emit(op, {data(in(0))}, json::object(), main_output());
}

void Importer::activation(const std::string& op, const std::vector<std::pair<std::string, float>>& attrs) {
  std::set<std::string> names;
  json a = json::object();
  for (const auto& [name, def] : attrs) {
    names.insert(name);
    a[name] = attr_float(name, def);
  }
  allow_attrs(names);
  require_inputs(1, 1);
  emit(op, {data(in(0))}, a, main_output());
}

// PRelu's slope broadcasts to x (unidirectionally; Loom's binary ops
// broadcast both ways, which is the same for a valid model).
void Importer::prelu() {
  allow_attrs({});
  require_inputs(2, 2);
  emit("prelu", {data(in(0)), data(in(1))}, json::object(), main_output());
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
  if (fold_variadic(op)) return;
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

}  // namespace loom::graph::onnx_detail
