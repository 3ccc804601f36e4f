// resize: ONNX Resize in nearest and linear modes. Every source coordinate
// is a rational function of the output index, x_in = N(o) / D, with the
// scale given as a fraction (num / den per dim), so indices and weights are
// exact integer arithmetic (floor division and modulo) — no float index
// ever enters a loop nest, and bound inference sees affine pieces.
#include <algorithm>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

namespace {

std::vector<int64_t> ints(const nlohmann::json& a) { return a.get<std::vector<int64_t>>(); }

// The source coordinate of output index `o` along one dim as N / D (D > 0).
struct Coordinate {
  Expr n;
  int64_t d;
};

Coordinate source_coordinate(const std::string& mode, Expr o, int64_t in, int64_t out, int64_t num, int64_t den) {
  if (mode == "align_corners") {
    // o * (in - 1) / (in * scale - 1): the scaled length unrounded, as ONNX
    // defines it (with sizes given, in * scale is the output size).
    const int64_t d = in * num - den;
    if (out == 1 || d <= 0) return {Expr(int64_t{0}), 1};
    return {o * Expr((in - 1) * den), d};
  }
  if (mode == "asymmetric") return {o * Expr(den), num};
  if (mode == "tf_half_pixel_for_nn") return {(o * Expr(2) + Expr(1)) * Expr(den), 2 * num};
  if (mode == "pytorch_half_pixel" && out == 1) return {Expr(int64_t{0}), 1};
  // half_pixel: (o + 0.5) / scale - 0.5
  return {(o * Expr(2) + Expr(1)) * Expr(den) - Expr(num), 2 * num};
}

Expr clamp_index(Expr i, int64_t n) { return min(max(i, Expr(int64_t{0})), Expr(n - 1)); }

Expr nearest_index(const std::string& rounding, const Coordinate& c, int64_t in) {
  Expr i;
  if (rounding == "floor") i = c.n / Expr(c.d);
  else if (rounding == "ceil") i = -((-c.n) / Expr(c.d));
  else if (rounding == "round_prefer_ceil") i = (c.n * Expr(2) + Expr(c.d)) / Expr(2 * c.d);
  else i = -((Expr(c.d) - c.n * Expr(2)) / Expr(2 * c.d));  // round_prefer_floor
  return clamp_index(i, in);
}

Shape resize_shape(const Shape& in, const nlohmann::json& a) {
  const auto sizes = ints(a["sizes"]), num = ints(a["scale_num"]), den = ints(a["scale_den"]);
  if (sizes.size() != in.size() || num.size() != in.size() || den.size() != in.size())
    throw LoomError("attributes 'sizes', 'scale_num' and 'scale_den' need one entry per input dim (" +
                    std::to_string(in.size()) + ")");
  for (size_t d = 0; d < in.size(); ++d)
    if (sizes[d] < 1 || num[d] < 1 || den[d] < 1)
      throw LoomError("dim " + std::to_string(d) + ": size " + std::to_string(sizes[d]) + ", scale " +
                      std::to_string(num[d]) + "/" + std::to_string(den[d]) + " must be positive");
  return sizes;
}

Tensor lower_resize(const Tensor& x, const nlohmann::json& a, const std::string& name) {
  const auto sizes = ints(a["sizes"]), num = ints(a["scale_num"]), den = ints(a["scale_den"]);
  const std::string mode = a["mode"].get<std::string>();
  const std::string transform = a["coordinate_transformation_mode"].get<std::string>();
  const std::string rounding = a["nearest_mode"].get<std::string>();
  const size_t rank = x.ndim();
  return compute_with_axes(
      sizes,
      [&](const std::vector<Var>& v) {
        // Dims whose size and scale are unchanged map o to o.
        std::vector<Expr> base(rank);
        std::vector<size_t> lerp_dims;
        std::vector<Expr> upper(rank), frac(rank);
        for (size_t d = 0; d < rank; ++d) {
          const int64_t in = x.shape()[d];
          if (in == sizes[d] && num[d] == den[d]) {
            base[d] = v[d];
            continue;
          }
          Coordinate c = source_coordinate(transform, v[d], in, sizes[d], num[d], den[d]);
          if (mode == "nearest") {
            base[d] = nearest_index(rounding, c, in);
            continue;
          }
          // Linear: the coordinate clamped into [0, in - 1], its floor and
          // the next index (clamped), weighted by the fraction.
          Expr n = min(max(c.n, Expr(int64_t{0})), Expr((in - 1) * c.d));
          base[d] = n / Expr(c.d);
          upper[d] = min(base[d] + Expr(1), Expr(in - 1));
          frac[d] = cast(DType::kFloat, n % Expr(c.d)) * float_imm(1.0 / static_cast<double>(c.d));
          lerp_dims.push_back(d);
        }
        if (lerp_dims.empty()) return x(base);
        Expr sum;
        for (size_t corner = 0; corner < (size_t{1} << lerp_dims.size()); ++corner) {
          std::vector<Expr> idx = base;
          Expr w;
          for (size_t k = 0; k < lerp_dims.size(); ++k) {
            const size_t d = lerp_dims[k];
            const bool hi = (corner >> k) & 1;
            if (hi) idx[d] = upper[d];
            Expr wk = hi ? frac[d] : float_imm(1.0) - frac[d];
            w = w.defined() ? w * wk : wk;
          }
          Expr term = w * x(idx);
          sum = sum.defined() ? sum + term : term;
        }
        return sum;
      },
      name);
}

}  // namespace

void register_resize_ops(std::vector<OpDef>& out) {
  out.push_back(make_op(
      "resize",
      "ONNX Resize, nearest or linear (per interpolated dim), the scale per dim a fraction scale_num / scale_den",
      1, 1, OpPattern::kInjective,
      {{"sizes", nlohmann::json(), "the output shape", {1}},
       {"scale_num", nlohmann::json(), "the scale's numerator per dim", {1}},
       {"scale_den", nlohmann::json(), "the scale's denominator per dim", {1}},
       {"mode", "nearest", "nearest or linear", nullptr, {"nearest", "linear"}},
       {"coordinate_transformation_mode", "half_pixel", "how an output index maps to the input", nullptr,
        {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}},
       {"nearest_mode", "round_prefer_floor", "rounding in nearest mode", nullptr,
        {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return resize_shape(in[0], a); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        return lower_resize(in[0], a, name);
      }));
}

}  // namespace loom::graph::op_detail
