// Element-wise ops: unary math and numpy-broadcasting binary arithmetic.
#include <cmath>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

namespace {

using UnaryFn = std::function<Expr(Expr, const nlohmann::json&)>;

Tensor lower_unary(const Tensor& x, const nlohmann::json& attrs, const std::string& name, const UnaryFn& f) {
  return compute_with_axes(
      x.shape(), [&](const std::vector<Var>& v) { return f(x(std::vector<Expr>(v.begin(), v.end())), attrs); }, name);
}

OpDef unary(const std::string& name, const std::string& doc, UnaryFn f, std::vector<OpAttr> attrs = {}) {
  return make_op(
      name, doc, 1, 1, OpPattern::kElemWise, std::move(attrs),
      [](const std::vector<Shape>& in, const nlohmann::json&) { return in[0]; },
      [f](const std::vector<Tensor>& in, const nlohmann::json& attrs, const std::string& out) {
        return lower_unary(in[0], attrs, out, f);
      });
}

using BinaryFn = Expr (*)(Expr, Expr);

OpDef binary(const std::string& name, const std::string& doc, BinaryFn f) {
  return make_op(
      name, doc, 2, 2, OpPattern::kBroadcast, {},
      [](const std::vector<Shape>& in, const nlohmann::json&) { return broadcast_shapes(in[0], in[1]); },
      [f](const std::vector<Tensor>& in, const nlohmann::json&, const std::string& out) {
        const Tensor &a = in[0], &b = in[1];
        return compute_with_axes(
            broadcast_shapes(a.shape(), b.shape()),
            [&](const std::vector<Var>& v) { return f(a(broadcast_indices(a, v)), b(broadcast_indices(b, v))); }, out);
      });
}

Expr add_fn(Expr a, Expr b) { return a + b; }
Expr sub_fn(Expr a, Expr b) { return a - b; }
Expr mul_fn(Expr a, Expr b) { return a * b; }
Expr div_fn(Expr a, Expr b) { return a / b; }
Expr pow_fn(Expr a, Expr b) { return pow(a, b); }
Expr max_fn(Expr a, Expr b) { return max(a, b); }
Expr min_fn(Expr a, Expr b) { return min(a, b); }

Expr gelu(Expr x, const nlohmann::json& attrs) {
  const std::string approx = attrs["approximate"].get<std::string>();
  if (approx == "tanh") {
    const double c = std::sqrt(2.0 / M_PI);
    return float_imm(0.5) * x * (float_imm(1.0) + tanh(float_imm(c) * (x + float_imm(0.044715) * x * x * x)));
  }
  return float_imm(0.5) * x * (float_imm(1.0) + erf(x * float_imm(M_SQRT1_2)));
}

}  // namespace

void register_elementwise_ops(std::vector<OpDef>& out) {
  out.push_back(unary("relu", "max(x, 0)", [](Expr x, const nlohmann::json&) { return max(x, float_imm(0.0)); }));
  out.push_back(unary("sigmoid", "1 / (1 + exp(-x))", [](Expr x, const nlohmann::json&) { return sigmoid(x); }));
  out.push_back(unary("tanh", "tanh(x)", [](Expr x, const nlohmann::json&) { return tanh(x); }));
  out.push_back(unary("erf", "erf(x)", [](Expr x, const nlohmann::json&) { return erf(x); }));
  out.push_back(unary("sqrt", "sqrt(x)", [](Expr x, const nlohmann::json&) { return sqrt(x); }));
  out.push_back(unary("exp", "exp(x)", [](Expr x, const nlohmann::json&) { return exp(x); }));
  out.push_back(unary("log", "log(x)", [](Expr x, const nlohmann::json&) { return log(x); }));
  out.push_back(unary("neg", "-x", [](Expr x, const nlohmann::json&) { return -x; }));
  out.push_back(unary("abs", "|x|", [](Expr x, const nlohmann::json&) { return fabs(x); }));
  out.push_back(unary("gelu", "x * Phi(x); approximate \"tanh\" uses the tanh form", gelu,
                      {{"approximate", "none", "\"none\" (erf) or \"tanh\"", nullptr, {"none", "tanh"}}}));
  out.push_back(unary(
      "clip", "min(max(x, min), max)",
      [](Expr x, const nlohmann::json& a) {
        return min(max(x, float_imm(a["min"].get<double>())), float_imm(a["max"].get<double>()));
      },
      {{"min", -3.4028234663852886e38, "lower bound"}, {"max", 3.4028234663852886e38, "upper bound"}}));
  out.push_back(unary(
      "pow_scalar", "x ^ exponent (a constant)",
      [](Expr x, const nlohmann::json& a) { return pow(x, float_imm(a["exponent"].get<double>())); },
      {{"exponent", nlohmann::json(), "the constant exponent", 1.0}}));
  out.push_back(binary("add", "a + b", add_fn));
  out.push_back(binary("sub", "a - b", sub_fn));
  out.push_back(binary("mul", "a * b", mul_fn));
  out.push_back(binary("div", "a / b", div_fn));
  out.push_back(binary("pow", "a ^ b", pow_fn));
  out.push_back(binary("max", "max(a, b)", max_fn));
  out.push_back(binary("min", "min(a, b)", min_fn));
}

}  // namespace loom::graph::op_detail
