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
  return fold_broadcast({&a, &b}, false, [&](const std::vector<long double>& v) {
    const int64_t x = static_cast<int64_t>(v[0]), y = static_cast<int64_t>(v[1]);
    if (op == "Add") return static_cast<long double>(x + y);
    if (op == "Sub") return static_cast<long double>(x - y);
    if (op == "Mul") return static_cast<long double>(x * y);
    if (y == 0) throw LoomError("integer division by zero");
    return static_cast<long double>(x / y);
  });
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

void Importer::einsum() {
  allow_attrs({"equation"});
  require_inputs(1, INT_MAX);
  if (!attr("equation")) throw LoomError("attribute equation is missing");
  std::vector<std::string> inputs;
  for (int i = 0; i < num_inputs(); ++i) inputs.push_back(data(in(i)));
  emit("einsum", inputs, {{"equation", attr_string("equation", "")}}, main_output());
}

// ArgMax / ArgMin from ops Loom has: the extreme along the axis, then the
// first (or last) position holding it — a reduce_min (or max) over the
// positions where the input equals it. The index is carried as a float.
void Importer::arg_extreme(bool max) {
  allow_attrs({"axis", "keepdims", "select_last_index"});
  require_inputs(1, 1);
  const Shape shape = shape_of(in(0));
  const int64_t axis = op_detail::normalize_axis(attr_int("axis", 0), shape.size());
  const int64_t keep = attr_int("keepdims", 1);
  const bool last = attr_int("select_last_index", 0) != 0;
  const std::string x = data(in(0));
  const std::string extreme =
      step_node(max ? "reduce_max" : "reduce_min", {x}, {{"axes", {axis}}, {"keepdims", 1}});
  const std::string hit = step_node("equal", {x, extreme}, json::object());
  Shape pos_shape(shape.size() - axis, 1);
  pos_shape[0] = shape[axis];
  std::vector<float> positions;
  for (int64_t k = 0; k < shape[axis]; ++k) positions.push_back(static_cast<float>(k));
  const std::string pos = new_constant(node_name_ + "_positions", pos_shape, positions);
  const std::string miss = new_constant(node_name_ + "_miss", {}, {last ? -1.0f : static_cast<float>(shape[axis])});
  const std::string cand = step_node("where", {hit, pos, miss}, json::object());
  emit(last ? "reduce_max" : "reduce_min", {cand}, {{"axes", {axis}}, {"keepdims", keep}}, float_carried_output());
}

// InstanceNormalization: per sample and channel over the spatial dims, a
// layer norm from axis 2 (unit scale), then the per-channel scale and bias.
void Importer::instance_norm() {
  allow_attrs({"epsilon"});
  require_inputs(3, 3);
  const Shape shape = shape_of(in(0));
  if (shape.size() < 3) throw LoomError("input of shape " + shape_string(shape) + ": expected at least 3 dims");
  const double eps = attr_float("epsilon", 1e-5f);
  const std::string one = new_constant(node_name_ + "_one", {1}, {1.0f});
  const std::string normed = step_node("layer_norm", {data(in(0)), one}, {{"axis", 2}, {"epsilon", eps}});
  Shape per_channel(shape.size() - 1, 1);
  per_channel[0] = shape[1];
  const std::string scale = step_node("reshape", {data(in(1))}, {{"shape", per_channel}});
  const std::string bias = step_node("reshape", {data(in(2))}, {{"shape", per_channel}});
  emit("add", {step_node("mul", {normed, scale}, json::object()), bias}, json::object(), main_output());
}

// GroupNormalization (opset 18: scale and bias per group; 21: per channel):
// the channels regrouped [N, G, C/G * spatial], a layer norm from axis 2,
// the shape restored, then scale and bias.
void Importer::group_norm() {
  allow_attrs({"epsilon", "num_groups", "stash_type"});
  require_inputs(3, 3);
  const Shape shape = shape_of(in(0));
  if (shape.size() < 3) throw LoomError("input of shape " + shape_string(shape) + ": expected at least 3 dims");
  const int64_t groups = attr_int("num_groups", 0), C = shape[1];
  if (groups < 1 || C % groups != 0)
    throw LoomError("attribute num_groups=" + std::to_string(groups) + " does not divide " + std::to_string(C) + " channels");
  const double eps = attr_float("epsilon", 1e-5f);
  const std::string one = new_constant(node_name_ + "_one", {1}, {1.0f});
  const std::string grouped = step_node("reshape", {data(in(0))}, {{"shape", {shape[0], groups, -1}}});
  const std::string normed = step_node("layer_norm", {grouped, one}, {{"axis", 2}, {"epsilon", eps}});
  std::string y = step_node("reshape", {normed}, {{"shape", shape}});
  // Per-group parameters repeat over the group's channels.
  auto per_channel = [&](int i) {
    const Shape p = shape_of(in(i));
    std::string v = data(in(i));
    Shape target(shape.size() - 1, 1);
    if (num_elements(p) == groups && groups != C) {
      v = step_node("reshape", {v}, {{"shape", {groups, 1}}});
      v = step_node("expand", {v}, {{"shape", {groups, C / groups}}});
    } else if (num_elements(p) != C) {
      throw LoomError(input_label(i, "the scale or bias") + " has " + std::to_string(num_elements(p)) +
                      " values, expected " + std::to_string(C) + " or " + std::to_string(groups));
    }
    target[0] = C;
    return step_node("reshape", {v}, {{"shape", target}});
  };
  emit("add", {step_node("mul", {y, per_channel(1)}, json::object()), per_channel(2)}, json::object(), main_output());
}

void Importer::matmul() {
  allow_attrs({});
  require_inputs(2, 2);
  emit("matmul", {data(in(0)), data(in(1))}, json::object(), main_output());
}

}  // namespace loom::graph::onnx_detail
