// Neural-network ops: conv2d, batch_norm, pooling, softmax, layer_norm.
#include <algorithm>
#include <limits>

#include "graph/ops.h"
#include "ir/error.h"
#include "ir/workload_registry.h"

namespace loom::graph::op_detail {

namespace {

constexpr float kLowest = std::numeric_limits<float>::lowest();

std::vector<int64_t> ints(const nlohmann::json& a, const char* key, size_t count) {
  std::vector<int64_t> v;
  for (const auto& x : a[key]) {
    if (!x.is_number_integer()) throw LoomError(std::string("attribute '") + key + "': expected integers");
    v.push_back(x.get<int64_t>());
  }
  if (v.size() != count)
    throw LoomError(std::string("attribute '") + key + "': expected " + std::to_string(count) + " values, got " +
                    std::to_string(v.size()));
  return v;
}

void require_rank(const Shape& s, size_t rank, const std::string& what) {
  if (s.size() != rank)
    throw LoomError(what + " has " + std::to_string(s.size()) + " dims (" + shape_string(s) + "), expected " +
                    std::to_string(rank));
}

// ---- conv2d -----------------------------------------------------------------

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;  // pads: top, left, bottom, right
  std::vector<int64_t> out;                              // output H, W
  std::vector<int64_t> extra;                            // padding past the bottom/right for ceil_mode
};

Window window(const Shape& x, const std::vector<int64_t>& kernel, const nlohmann::json& a, bool ceil_mode) {
  Window w;
  w.kernel = kernel;
  w.strides = ints(a, "strides", 2);
  w.pads = ints(a, "pads", 4);
  w.dilations = ints(a, "dilations", 2);
  for (int d = 0; d < 2; ++d) {
    if (w.strides[d] < 1 || w.dilations[d] < 1) throw LoomError("strides and dilations must be positive");
    if (w.pads[d] < 0 || w.pads[d + 2] < 0) throw LoomError("pads must be non-negative");
    const int64_t span = w.dilations[d] * (kernel[d] - 1) + 1;
    const int64_t room = x[2 + d] + w.pads[d] + w.pads[d + 2] - span;
    if (room < 0)
      throw LoomError("the window (" + std::to_string(span) + ") is larger than the padded input (" +
                      std::to_string(x[2 + d] + w.pads[d] + w.pads[d + 2]) + ")");
    int64_t out = room / w.strides[d] + 1;
    // ceil_mode: one more window if it starts inside the input or the
    // leading padding (the rule of ONNX and PyTorch).
    if (ceil_mode && room % w.strides[d] != 0 && (out) * w.strides[d] < x[2 + d] + w.pads[d]) ++out;
    w.out.push_back(out);
    w.extra.push_back(std::max<int64_t>(0, (out - 1) * w.strides[d] + span - (x[2 + d] + w.pads[d] + w.pads[d + 2])));
  }
  return w;
}

Shape conv2d_shape(const std::vector<Shape>& in, const nlohmann::json& a) {
  require_rank(in[0], 4, "the data");
  require_rank(in[1], 4, "the weight");
  const int64_t group = a["group"].get<int64_t>();
  const int64_t C = in[0][1], K = in[1][0];
  if (group < 1 || C % group != 0 || K % group != 0)
    throw LoomError("group " + std::to_string(group) + " does not divide the channels (" + std::to_string(C) +
                    " in, " + std::to_string(K) + " out)");
  if (in[1][1] * group != C)
    throw LoomError("the weight has " + std::to_string(in[1][1]) + " input channels per group, the data " +
                    std::to_string(C) + " channels in " + std::to_string(group) + " groups");
  if (in.size() == 3 && (in[2].size() != 1 || in[2][0] != K))
    throw LoomError("the bias has shape " + shape_string(in[2]) + ", expected " + std::to_string(K));
  Window w = window(in[0], {in[1][2], in[1][3]}, a, false);
  return {in[0][0], K, w.out[0], w.out[1]};
}

Tensor conv2d_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor &X = in[0], &Wt = in[1];
  Window w = window(X.shape(), {Wt.shape()[2], Wt.shape()[3]}, a, false);
  const int64_t group = a["group"].get<int64_t>();
  const int64_t K = Wt.shape()[0], Cg = Wt.shape()[1], Kg = K / group;
  Tensor P = workload_detail::pad_tensor(X, {0, 0, w.pads[0], w.pads[1]}, {0, 0, w.pads[2], w.pads[3]}, name + "_pad");
  Var rc = reduce_axis(Cg, name + "_rc"), ry = reduce_axis(w.kernel[0], name + "_ry"),
      rx = reduce_axis(w.kernel[1], name + "_rx");
  const bool has_bias = in.size() == 3;
  Tensor conv = compute_with_axes(
      {X.shape()[0], K, w.out[0], w.out[1]},
      [&](const std::vector<Var>& v) -> Expr {
        Expr chan = group == 1 ? Expr(rc) : (v[1] / Expr(Kg)) * Expr(Cg) + rc;
        return sum(P(v[0], chan, v[2] * Expr(w.strides[0]) + ry * Expr(w.dilations[0]),
                     v[3] * Expr(w.strides[1]) + rx * Expr(w.dilations[1])) *
                       Wt(v[1], rc, ry, rx),
                   {rc, ry, rx});
      },
      has_bias ? name + "_conv" : name);
  if (!has_bias) return conv;
  const Tensor& B = in[2];
  return compute_with_axes(
      conv.shape(), [&](const std::vector<Var>& v) { return conv(v[0], v[1], v[2], v[3]) + B(v[1]); }, name);
}

// ---- pooling ----------------------------------------------------------------

std::vector<OpAttr> pool_attrs() {
  return {{"kernel", nlohmann::json(), "window height, width", {1, 1}},
          {"strides", {1, 1}, "strides"},
          {"pads", {0, 0, 0, 0}, "padding top, left, bottom, right"},
          {"dilations", {1, 1}, "window dilation"},
          {"ceil_mode", 0, "1: round the output size up"},
          {"count_include_pad", 0, "avg_pool2d: 1 divides by the whole window, padding included"}};
}

Shape pool_shape(const std::vector<Shape>& in, const nlohmann::json& a) {
  require_rank(in[0], 4, "the data");
  Window w = window(in[0], ints(a, "kernel", 2), a, a["ceil_mode"].get<int>() != 0);
  for (int d = 0; d < 2; ++d) {
    if (w.kernel[d] < 1) throw LoomError("attribute 'kernel': sizes must be positive");
    // Else a window could lie wholly in the padding (no element to take).
    if (w.pads[d] >= w.kernel[d] || w.pads[d + 2] >= w.kernel[d])
      throw LoomError("attribute 'pads': padding must be smaller than the kernel");
  }
  return {in[0][0], in[0][1], w.out[0], w.out[1]};
}

Tensor max_pool_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor& X = in[0];
  Window w = window(X.shape(), ints(a, "kernel", 2), a, a["ceil_mode"].get<int>() != 0);
  Tensor P = workload_detail::pad_tensor(X, {0, 0, w.pads[0], w.pads[1]},
                                         {0, 0, w.pads[2] + w.extra[0], w.pads[3] + w.extra[1]}, name + "_pad", kLowest);
  Var ry = reduce_axis(w.kernel[0], name + "_ry"), rx = reduce_axis(w.kernel[1], name + "_rx");
  return compute_with_axes(
      {X.shape()[0], X.shape()[1], w.out[0], w.out[1]},
      [&](const std::vector<Var>& v) -> Expr {
        return max_reduce(P(v[0], v[1], v[2] * Expr(w.strides[0]) + ry * Expr(w.dilations[0]),
                            v[3] * Expr(w.strides[1]) + rx * Expr(w.dilations[1])),
                          {ry, rx});
      },
      name);
}

Tensor avg_pool_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor& X = in[0];
  Window w = window(X.shape(), ints(a, "kernel", 2), a, a["ceil_mode"].get<int>() != 0);
  if (w.dilations[0] != 1 || w.dilations[1] != 1) throw LoomError("attribute 'dilations': avg_pool2d supports only 1");
  Tensor P = workload_detail::pad_tensor(X, {0, 0, w.pads[0], w.pads[1]},
                                         {0, 0, w.pads[2] + w.extra[0], w.pads[3] + w.extra[1]}, name + "_pad");
  Var ry = reduce_axis(w.kernel[0], name + "_ry"), rx = reduce_axis(w.kernel[1], name + "_rx");
  Tensor S = compute_with_axes(
      {X.shape()[0], X.shape()[1], w.out[0], w.out[1]},
      [&](const std::vector<Var>& v) -> Expr {
        return sum(P(v[0], v[1], v[2] * Expr(w.strides[0]) + ry, v[3] * Expr(w.strides[1]) + rx), {ry, rx});
      },
      name + "_sum");
  const bool include_pad = a["count_include_pad"].get<int>() != 0;
  // Elements of the window inside [lo, hi): the input, or the input and its
  // declared padding (never the extra ceil_mode padding).
  auto count = [&](const Var& o, int d) -> Expr {
    const int64_t lo = include_pad ? -w.pads[d] : 0;
    const int64_t hi = X.shape()[2 + d] + (include_pad ? w.pads[d + 2] : 0);
    Expr start = o * Expr(w.strides[d]) - Expr(w.pads[d]);
    return min(start + Expr(w.kernel[d]), Expr(hi)) - max(start, Expr(lo));
  };
  return compute_with_axes(
      S.shape(),
      [&](const std::vector<Var>& v) -> Expr {
        return S(v[0], v[1], v[2], v[3]) / cast(DType::kFloat, count(v[2], 0) * count(v[3], 1));
      },
      name);
}

Tensor global_avg_pool_lower(const std::vector<Tensor>& in, const nlohmann::json&, const std::string& name) {
  const Tensor& X = in[0];
  std::vector<int64_t> axes;
  int64_t count = 1;
  for (size_t d = 2; d < X.ndim(); ++d) {
    axes.push_back(static_cast<int64_t>(d));
    count *= X.shape()[d];
  }
  Tensor S = reduce_over(X, axes, true, ReduceKind::kSum, name + "_sum");
  return compute_with_axes(
      S.shape(), [&](const std::vector<Var>& v) { return S(std::vector<Expr>(v.begin(), v.end())) * float_imm(1.0 / count); },
      name);
}

// ---- normalization ----------------------------------------------------------

Tensor batch_norm_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor &X = in[0], &scale = in[1], &bias = in[2], &mean = in[3], &var = in[4];
  const double eps = a["epsilon"].get<double>();
  return compute_with_axes(
      X.shape(),
      [&](const std::vector<Var>& v) -> Expr {
        Expr c = v[1];
        return (X(std::vector<Expr>(v.begin(), v.end())) - mean(c)) / sqrt(var(c) + float_imm(eps)) * scale(c) + bias(c);
      },
      name);
}

Shape batch_norm_shape(const std::vector<Shape>& in, const nlohmann::json&) {
  if (in[0].size() < 2) throw LoomError("the data needs a channel dim (dim 1)");
  for (size_t i = 1; i < 5; ++i)
    if (in[i].size() != 1 || in[i][0] != in[0][1])
      throw LoomError("input " + std::to_string(i) + " has shape " + shape_string(in[i]) + ", expected " +
                      std::to_string(in[0][1]) + " (the channels)");
  return in[0];
}

// Indices of x with the dims in `axes` read at 0: a value reduced with keepdims.
std::vector<Expr> at_reduced(const std::vector<Var>& v, const std::vector<int64_t>& axes) {
  std::vector<Expr> idx(v.begin(), v.end());
  for (int64_t d : axes) idx[d] = int_imm(0);
  return idx;
}

Tensor softmax_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor& X = in[0];
  const std::vector<int64_t> axes = {normalize_axis(a["axis"].get<int64_t>(), X.ndim())};
  Tensor mx = reduce_over(X, axes, true, ReduceKind::kMax, name + "_max");
  Tensor e = compute_with_axes(
      X.shape(),
      [&](const std::vector<Var>& v) { return exp(X(std::vector<Expr>(v.begin(), v.end())) - mx(at_reduced(v, axes))); },
      name + "_exp");
  Tensor s = reduce_over(e, axes, true, ReduceKind::kSum, name + "_sum");
  return compute_with_axes(
      X.shape(), [&](const std::vector<Var>& v) { return e(std::vector<Expr>(v.begin(), v.end())) / s(at_reduced(v, axes)); },
      name);
}

// Normalized over dims [axis, rank): scale and bias broadcast against them.
Shape layer_norm_shape(const std::vector<Shape>& in, const nlohmann::json& a) {
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), in[0].size());
  Shape tail(in[0].begin() + axis, in[0].end());
  for (size_t i = 1; i < in.size(); ++i)
    if (broadcast_shapes(in[i], tail) != tail)
      throw LoomError("input " + std::to_string(i) + " has shape " + shape_string(in[i]) +
                      ", which does not broadcast to the normalized dims " + shape_string(tail));
  return in[0];
}

Tensor layer_norm_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  const Tensor& X = in[0];
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), X.ndim());
  const double eps = a["epsilon"].get<double>();
  std::vector<int64_t> axes;
  int64_t count = 1;
  for (size_t d = axis; d < X.ndim(); ++d) {
    axes.push_back(static_cast<int64_t>(d));
    count *= X.shape()[d];
  }
  const Expr inv_n = float_imm(1.0 / count);
  Tensor s = reduce_over(X, axes, true, ReduceKind::kSum, name + "_sum");
  // Two passes (the variance of the centred values): no cancellation.
  Tensor centred = compute_with_axes(
      X.shape(),
      [&](const std::vector<Var>& v) { return X(std::vector<Expr>(v.begin(), v.end())) - s(at_reduced(v, axes)) * inv_n; },
      name + "_centred");
  Tensor sq = compute_with_axes(
      X.shape(),
      [&](const std::vector<Var>& v) {
        Expr c = centred(std::vector<Expr>(v.begin(), v.end()));
        return c * c;
      },
      name + "_sq");
  Tensor ss = reduce_over(sq, axes, true, ReduceKind::kSum, name + "_sqsum");
  return compute_with_axes(
      X.shape(),
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Var> tail(v.begin() + axis, v.end());
        Expr y = centred(std::vector<Expr>(v.begin(), v.end())) / sqrt(ss(at_reduced(v, axes)) * inv_n + float_imm(eps));
        y = y * in[1](broadcast_indices(in[1], tail));
        if (in.size() == 3) y = y + in[2](broadcast_indices(in[2], tail));
        return y;
      },
      name);
}


}  // namespace

void register_nn_ops(std::vector<OpDef>& out) {
  out.push_back(make_op("conv2d", "2-D convolution, data NCHW, weight K x C/group x R x S, optional bias K", 2, 3,
                     OpPattern::kOutEWiseFusable,
                     {{"strides", {1, 1}, "strides"},
                      {"pads", {0, 0, 0, 0}, "zero padding top, left, bottom, right"},
                      {"dilations", {1, 1}, "kernel dilation"},
                      {"group", 1, "channel groups"}},
                     conv2d_shape, conv2d_lower));
  out.push_back(make_op("max_pool2d", "2-D max pooling (NCHW)", 1, 1, OpPattern::kOutEWiseFusable, pool_attrs(),
                     pool_shape, max_pool_lower));
  out.push_back(make_op(
      "avg_pool2d", "2-D average pooling (NCHW)", 1, 1, OpPattern::kOutEWiseFusable, pool_attrs(),
      [](const std::vector<Shape>& in, const nlohmann::json& a) {
        // Refused here, not only when lowering, so that validate() names the node.
        if (ints(a, "dilations", 2) != std::vector<int64_t>{1, 1})
          throw LoomError("attribute 'dilations': avg_pool2d supports only 1");
        return pool_shape(in, a);
      },
      avg_pool_lower));
  out.push_back(make_op(
      "global_avg_pool2d", "mean over the spatial dims (N, C, spatial...)", 1, 1, OpPattern::kOutEWiseFusable, {},
      [](const std::vector<Shape>& in, const nlohmann::json&) {
        if (in[0].size() < 3) throw LoomError("the data needs spatial dims");
        Shape s = in[0];
        for (size_t d = 2; d < s.size(); ++d) s[d] = 1;
        return s;
      },
      global_avg_pool_lower));
  out.push_back(make_op("batch_norm", "inference batch normalization over dim 1 (x, scale, bias, mean, var)", 5, 5,
                     OpPattern::kBroadcast, {{"epsilon", 1e-5, "added to the variance"}}, batch_norm_shape,
                     batch_norm_lower));
  out.push_back(make_op(
      "softmax", "softmax along one axis", 1, 1, OpPattern::kOpaque, {{"axis", -1, "the softmax axis"}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) {
        normalize_axis(a["axis"].get<int64_t>(), in[0].size());
        return in[0];
      },
      softmax_lower));
  out.push_back(make_op("layer_norm", "layer normalization over dims [axis, rank) (x, scale, optional bias)", 2, 3,
                     OpPattern::kOpaque, {{"axis", -1, "first normalized dim"}, {"epsilon", 1e-5, "added to the variance"}},
                     layer_norm_shape, layer_norm_lower));
}

}  // namespace loom::graph::op_detail
