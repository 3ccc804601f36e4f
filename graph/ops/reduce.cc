// Reductions over a set of axes: reduce_sum, reduce_max, reduce_min,
// reduce_mean, reduce_l2.
#include <algorithm>
#include <functional>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

std::vector<int64_t> normalize_axes(const nlohmann::json& axes, size_t ndim) {
  std::vector<int64_t> out;
  for (const auto& a : axes) out.push_back(normalize_axis(a.get<int64_t>(), ndim));
  if (axes.empty())
    for (size_t d = 0; d < ndim; ++d) out.push_back(static_cast<int64_t>(d));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) throw LoomError("attribute 'axes' repeats an axis");
  return out;
}

Tensor reduce_over(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceKind kind,
                   const std::string& name) {
  const auto& in = x.shape();
  std::vector<int64_t> out_shape;
  std::vector<Var> rvars;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::count(axes.begin(), axes.end(), static_cast<int64_t>(d)) > 0;
    if (reduced) rvars.push_back(reduce_axis(in[d], name + "_r" + std::to_string(d)));
    if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : in[d]);
  }
  const bool scalar = out_shape.empty();
  if (scalar) out_shape.push_back(1);
  return compute_with_axes(
      out_shape,
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> idx;
        size_t o = 0, r = 0;
        for (size_t d = 0; d < in.size(); ++d) {
          const bool reduced = std::count(axes.begin(), axes.end(), static_cast<int64_t>(d)) > 0;
          if (reduced) {
            idx.push_back(rvars[r++]);
            if (keepdims) ++o;
          } else {
            idx.push_back(v[o++]);
          }
        }
        Expr src = x(idx);
        switch (kind) {
          case ReduceKind::kSum: return sum(src, rvars);
          case ReduceKind::kMax: return max_reduce(src, rvars);
          case ReduceKind::kMin: return min_reduce(src, rvars);
        }
        return Expr();
      },
      name);
}

namespace {

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::count(axes.begin(), axes.end(), static_cast<int64_t>(d)) > 0;
    if (!reduced) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// What a reduction does around its sum, max or min.
enum class Around { kNothing, kMean, kL2 };

OpDef reduce_op(const std::string& name, const std::string& doc, ReduceKind kind, Around around = Around::kNothing) {
  auto shape = [](const std::vector<Shape>& in, const nlohmann::json& a) {
    return reduced_shape(in[0], normalize_axes(a["axes"], in[0].size()), a["keepdims"].get<int>() != 0);
  };
  auto lower = [kind, around](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& out) {
    const Tensor& x = in[0];
    auto axes = normalize_axes(a["axes"], x.ndim());
    const bool keep = a["keepdims"].get<int>() != 0;
    if (around == Around::kNothing) return reduce_over(x, axes, keep, kind, out);
    auto each = [](const Tensor& t, const std::function<Expr(Expr)>& f, const std::string& n) {
      return compute_with_axes(
          t.shape(), [&](const std::vector<Var>& v) { return f(t(std::vector<Expr>(v.begin(), v.end()))); }, n);
    };
    if (around == Around::kL2) {
      Tensor sq = each(x, [](Expr e) { return e * e; }, out + "_sq");
      Tensor s = reduce_over(sq, axes, keep, ReduceKind::kSum, out + "_sum");
      return each(s, [](Expr e) { return sqrt(e); }, out);
    }
    int64_t count = 1;
    for (int64_t d : axes) count *= x.shape()[d];
    Tensor s = reduce_over(x, axes, keep, ReduceKind::kSum, out + "_sum");
    return each(s, [count](Expr e) { return e * float_imm(1.0 / count); }, out);
  };
  return make_op(name, doc, 1, 1, OpPattern::kCommReduce,
                 {{"axes", nlohmann::json::array(), "axes to reduce (empty: all)", {0}},
                  {"keepdims", 1, "keep reduced dims as size 1 (1) or drop them (0)"}},
                 shape, lower);
}

}  // namespace

void register_reduce_ops(std::vector<OpDef>& out) {
  out.push_back(reduce_op("reduce_sum", "sum over axes", ReduceKind::kSum));
  out.push_back(reduce_op("reduce_max", "max over axes", ReduceKind::kMax));
  out.push_back(reduce_op("reduce_min", "min over axes", ReduceKind::kMin));
  out.push_back(reduce_op("reduce_mean", "mean over axes", ReduceKind::kSum, Around::kMean));
  out.push_back(reduce_op("reduce_l2", "sqrt of the sum of squares over axes", ReduceKind::kSum, Around::kL2));
}

}  // namespace loom::graph::op_detail
