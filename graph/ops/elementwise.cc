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

Expr prelu_fn(Expr x, Expr slope) { return select(x < float_imm(0.0), slope * x, x); }
// Comparisons and logic on data give 1.0 or 0.0: a network's booleans
// (masks, conditions) are float tensors of ones and zeros.
Expr as_float(Expr cond) { return select(cond, float_imm(1.0), float_imm(0.0)); }
Expr equal_fn(Expr a, Expr b) { return as_float(a == b); }
Expr less_fn(Expr a, Expr b) { return as_float(a < b); }
Expr less_equal_fn(Expr a, Expr b) { return as_float(a <= b); }
Expr greater_fn(Expr a, Expr b) { return as_float(a > b); }
Expr greater_equal_fn(Expr a, Expr b) { return as_float(a >= b); }
Expr and_fn(Expr a, Expr b) { return as_float(a != float_imm(0.0) && b != float_imm(0.0)); }
Expr or_fn(Expr a, Expr b) { return as_float(a != float_imm(0.0) || b != float_imm(0.0)); }

double attr_f(const nlohmann::json& a, const char* name) { return a[name].get<double>(); }

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
  out.push_back(unary("reciprocal", "1 / x", [](Expr x, const nlohmann::json&) { return float_imm(1.0) / x; }));
  out.push_back(unary("not", "1 where x is 0, else 0 (booleans as 1.0 / 0.0)",
                      [](Expr x, const nlohmann::json&) { return as_float(x == float_imm(0.0)); }));
  out.push_back(unary("to_bool", "1 where x is not 0, else 0 (a cast to bool)",
                      [](Expr x, const nlohmann::json&) { return as_float(x != float_imm(0.0)); }));
  out.push_back(unary(
      "hard_sigmoid", "max(0, min(1, alpha * x + beta))",
      [](Expr x, const nlohmann::json& a) {
        return max(float_imm(0.0), min(float_imm(1.0), float_imm(attr_f(a, "alpha")) * x + float_imm(attr_f(a, "beta"))));
      },
      {{"alpha", 0.2, "slope"}, {"beta", 0.5, "offset"}}));
  out.push_back(unary("hard_swish", "x * max(0, min(1, x / 6 + 0.5))", [](Expr x, const nlohmann::json&) {
    return x * max(float_imm(0.0), min(float_imm(1.0), x * float_imm(1.0 / 6.0) + float_imm(0.5)));
  }));
  out.push_back(unary(
      "leaky_relu", "x where x >= 0, else alpha * x",
      [](Expr x, const nlohmann::json& a) { return select(x < float_imm(0.0), float_imm(attr_f(a, "alpha")) * x, x); },
      {{"alpha", 0.01, "the slope below 0"}}));
  out.push_back(unary(
      "elu", "x where x >= 0, else alpha * (exp(x) - 1)",
      [](Expr x, const nlohmann::json& a) {
        return select(x < float_imm(0.0), float_imm(attr_f(a, "alpha")) * (exp(x) - float_imm(1.0)), x);
      },
      {{"alpha", 1.0, "the scale below 0"}}));
  out.push_back(unary(
      "selu", "gamma * (x where x > 0, else alpha * (exp(x) - 1))",
      [](Expr x, const nlohmann::json& a) {
        return float_imm(attr_f(a, "gamma")) *
               select(x <= float_imm(0.0), float_imm(attr_f(a, "alpha")) * (exp(x) - float_imm(1.0)), x);
      },
      {{"alpha", 1.6732632423543772, "the scale below 0"}, {"gamma", 1.0507009873554805, "the output scale"}}));
  // max(x, 0) + log(1 + exp(-|x|)): log(1 + exp(x)) without overflow.
  out.push_back(unary("softplus", "log(1 + exp(x))", [](Expr x, const nlohmann::json&) {
    return max(x, float_imm(0.0)) + log(float_imm(1.0) + exp(-fabs(x)));
  }));
  out.push_back(unary("softsign", "x / (1 + |x|)",
                      [](Expr x, const nlohmann::json&) { return x / (float_imm(1.0) + fabs(x)); }));
  out.push_back(binary("prelu", "x where x >= 0, else slope * x (slope broadcast to x)", prelu_fn));
  out.push_back(binary("equal", "1 where a == b, else 0", equal_fn));
  out.push_back(binary("less", "1 where a < b, else 0", less_fn));
  out.push_back(binary("less_equal", "1 where a <= b, else 0", less_equal_fn));
  out.push_back(binary("greater", "1 where a > b, else 0", greater_fn));
  out.push_back(binary("greater_equal", "1 where a >= b, else 0", greater_equal_fn));
  out.push_back(binary("and", "1 where a and b are not 0, else 0", and_fn));
  out.push_back(binary("or", "1 where a or b is not 0, else 0", or_fn));
  // a - b * trunc(a / b) (fmod 1, C's sign) or a - b * floor(a / b) (fmod 0,
  // the divisor's sign, as Python's %); the quotient truncated through an
  // integer, exact while it stays below 2^63.
  out.push_back(make_op(
      "mod", "the remainder of a / b: with the sign of a (fmod 1) or of b (fmod 0)", 2, 2, OpPattern::kBroadcast,
      {{"fmod", 0, "1: C's fmod; 0: floor modulo"}},
      [](const std::vector<Shape>& in, const nlohmann::json&) { return broadcast_shapes(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const nlohmann::json& attrs, const std::string& out) {
        const Tensor &a = in[0], &b = in[1];
        const bool c_fmod = attrs["fmod"].get<int>() != 0;
        return compute_with_axes(
            broadcast_shapes(a.shape(), b.shape()),
            [&](const std::vector<Var>& v) {
              Expr x = a(broadcast_indices(a, v)), y = b(broadcast_indices(b, v));
              Expr q = x / y;
              Expr t = cast(DType::kFloat, cast(DType::kInt, q));
              if (!c_fmod) t = t - select(q < t, float_imm(1.0), float_imm(0.0));
              return x - y * t;
            },
            out);
      }));
  out.push_back(make_op(
      "where", "a where cond is not 0, else b (numpy broadcasting of all three)", 3, 3, OpPattern::kBroadcast, {},
      [](const std::vector<Shape>& in, const nlohmann::json&) {
        return broadcast_shapes(broadcast_shapes(in[0], in[1]), in[2]);
      },
      [](const std::vector<Tensor>& in, const nlohmann::json&, const std::string& out) {
        const Tensor &c = in[0], &a = in[1], &b = in[2];
        return compute_with_axes(
            broadcast_shapes(broadcast_shapes(c.shape(), a.shape()), b.shape()),
            [&](const std::vector<Var>& v) {
              return select(c(broadcast_indices(c, v)) != float_imm(0.0), a(broadcast_indices(a, v)),
                            b(broadcast_indices(b, v)));
            },
            out);
      }));
  out.push_back(binary("add", "a + b", add_fn));
  out.push_back(binary("sub", "a - b", sub_fn));
  out.push_back(binary("mul", "a * b", mul_fn));
  out.push_back(binary("div", "a / b", div_fn));
  out.push_back(binary("pow", "a ^ b", pow_fn));
  out.push_back(binary("max", "max(a, b)", max_fn));
  out.push_back(binary("min", "min(a, b)", min_fn));
}

}  // namespace loom::graph::op_detail
