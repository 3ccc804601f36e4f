// Convolution workloads (NC[D]HW data, K C/G kernel layouts):
// conv1d, conv2d, conv3d, group_conv2d, dilated_conv2d, depthwise_conv2d,
// transposed_conv2d, capsule_conv2d. Zero padding is a separate stage "pad";
// the output stage is always named "conv".
#include <algorithm>

#include "ir/workload_registry.h"

namespace loom {
namespace workload_detail {

namespace {

// out[n, k, o...] = sum_{c, r...} P[n, g*Cg + c, o*stride + r*dilation...] * Wt[k, c, r...]
// with g = k / (K/G); P is the (already padded) input.
Tensor conv_nd(const Tensor& P, const Tensor& Wt, int64_t K, int64_t G,
               const std::vector<int64_t>& out_spatial, int64_t stride, int64_t dilation) {
  const int64_t C = P.shape()[1];
  const int64_t Cg = C / G, Kg = K / G;
  const size_t sd = out_spatial.size();
  static const char* kNames[] = {"rz", "ry", "rx"};
  Var rc = reduce_axis(Cg, "rc");
  std::vector<Var> rk;
  for (size_t d = 0; d < sd; ++d) {
    rk.push_back(reduce_axis(Wt.shape()[2 + d], kNames[3 - sd + d]));
  }
  std::vector<int64_t> shape = {P.shape()[0], K};
  shape.insert(shape.end(), out_spatial.begin(), out_spatial.end());
  return compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) -> Expr {
        Expr chan = G == 1 ? Expr(rc) : (v[1] / Expr(Kg)) * Expr(Cg) + rc;
        std::vector<Expr> pidx = {v[0], chan};
        std::vector<Expr> widx = {v[1], rc};
        for (size_t d = 0; d < sd; ++d) {
          pidx.push_back(v[2 + d] * Expr(stride) + rk[d] * Expr(dilation));
          widx.push_back(rk[d]);
        }
        std::vector<Var> axes = {rc};
        axes.insert(axes.end(), rk.begin(), rk.end());
        return sum(P(pidx) * Wt(widx), axes);
      },
      "conv");
}

// Generic grouped N-d convolution from resolved params. `sp` names the
// spatial input dims (e.g. {"H","W"}), `kp` the kernel dims (e.g. {"R","S"}).
ComputeDAG build_conv(const WorkloadParams& p, const std::vector<std::string>& sp,
                      const std::vector<std::string>& kp, int64_t G) {
  const int64_t N = get(p, "N"), C = get(p, "C"), K = get(p, "K");
  const int64_t stride = get(p, "stride"), pad = get(p, "pad"), dil = get(p, "dilation");
  std::vector<int64_t> in_shape = {N, C}, k_shape = {K, C / G}, before = {0, 0}, out_sp;
  for (size_t d = 0; d < sp.size(); ++d) {
    in_shape.push_back(get(p, sp[d]));
    k_shape.push_back(get(p, kp[d]));
    before.push_back(pad);
    out_sp.push_back(conv_out_size(get(p, sp[d]), get(p, kp[d]), stride, pad, dil,
                                   "kernel " + kp[d]));
  }
  Tensor X = placeholder(in_shape, "data");
  Tensor Wt = placeholder(k_shape, "kernel");
  Tensor P = pad_tensor(X, before, before, "pad");
  Tensor out = conv_nd(P, Wt, K, G, out_sp, stride, dil);
  return ComputeDAG({X, Wt}, {out});
}

std::vector<WorkloadParam> conv2d_params(int64_t C, int64_t HW, int64_t K, int64_t RS,
                                         int64_t stride, int64_t pad, int64_t dil) {
  return {{"N", 1, "batch"},
          {"C", C, "input channels"},
          {"H", HW, "input height"},
          {"W", HW, "input width"},
          {"K", K, "output channels"},
          {"R", RS, "kernel height"},
          {"S", RS, "kernel width"},
          {"stride", stride, "stride (both dims)"},
          {"pad", pad, "zero padding on every side", 0},
          {"dilation", dil, "kernel dilation (both dims)"}};
}

}  // namespace

void register_conv_workloads(std::vector<WorkloadInfo>& out) {
  {
    WorkloadInfo w;
    w.name = "conv1d";
    w.description = "1-D convolution, data NCL, kernel KCR";
    w.params = {{"N", 1, "batch"},          {"C", 64, "input channels"},
                {"L", 256, "input length"}, {"K", 128, "output channels"},
                {"R", 3, "kernel width"},   {"stride", 1, "stride"},
                {"pad", 1, "zero padding on each side", 0},
                {"dilation", 1, "kernel dilation"}};
    w.small_params = {{"N", 2}, {"C", 3}, {"L", 11}, {"K", 4}, {"R", 3}, {"stride", 2},
                      {"pad", 1}, {"dilation", 2}};
    w.build = [](const WorkloadParams& p) { return build_conv(p, {"L"}, {"R"}, 1); };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "conv2d";
    w.description = "2-D convolution, data NCHW, kernel KCRS (ResNet-50 3x3 layer by default)";
    w.params = conv2d_params(64, 56, 64, 3, 1, 1, 1);
    w.small_params = {{"N", 1}, {"C", 3}, {"H", 7}, {"W", 6}, {"K", 4},
                      {"R", 3}, {"S", 2}, {"stride", 2}, {"pad", 1}};
    w.build = [](const WorkloadParams& p) { return build_conv(p, {"H", "W"}, {"R", "S"}, 1); };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "dilated_conv2d";
    w.description = "2-D convolution with dilated kernel, data NCHW, kernel KCRS";
    w.params = conv2d_params(64, 56, 64, 3, 1, 2, 2);
    w.small_params = {{"C", 3}, {"H", 9}, {"W", 8}, {"K", 4}, {"pad", 1}};
    w.build = [](const WorkloadParams& p) { return build_conv(p, {"H", "W"}, {"R", "S"}, 1); };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "group_conv2d";
    w.description = "grouped 2-D convolution, data NCHW, kernel K(C/groups)RS";
    w.params = conv2d_params(64, 56, 64, 3, 1, 1, 1);
    w.params.push_back({"groups", 4, "channel groups (divides C and K)"});
    w.small_params = {{"C", 4}, {"H", 6}, {"W", 6}, {"K", 6}, {"groups", 2}};
    w.build = [](const WorkloadParams& p) {
      require_divisible(p, "C", "groups");
      require_divisible(p, "K", "groups");
      return build_conv(p, {"H", "W"}, {"R", "S"}, get(p, "groups"));
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "conv3d";
    w.description = "3-D convolution, data NCDHW, kernel KCTRS";
    w.params = {{"N", 1, "batch"},          {"C", 64, "input channels"},
                {"D", 8, "input depth"},    {"H", 28, "input height"},
                {"W", 28, "input width"},   {"K", 64, "output channels"},
                {"T", 3, "kernel depth"},   {"R", 3, "kernel height"},
                {"S", 3, "kernel width"},   {"stride", 1, "stride (all dims)"},
                {"pad", 1, "zero padding on every side", 0},
                {"dilation", 1, "kernel dilation (all dims)"}};
    w.small_params = {{"C", 2}, {"D", 4}, {"H", 5}, {"W", 4}, {"K", 3},
                      {"T", 2}, {"R", 3}, {"S", 2}, {"stride", 1}, {"pad", 1}};
    w.build = [](const WorkloadParams& p) {
      return build_conv(p, {"D", "H", "W"}, {"T", "R", "S"}, 1);
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "depthwise_conv2d";
    w.description = "depthwise 2-D convolution (multiplier 1), data NCHW, kernel C1RS";
    w.params = {{"N", 1, "batch"},          {"C", 128, "channels"},
                {"H", 56, "input height"},  {"W", 56, "input width"},
                {"R", 3, "kernel height"},  {"S", 3, "kernel width"},
                {"stride", 1, "stride (both dims)"},
                {"pad", 1, "zero padding on every side", 0},
                {"dilation", 1, "kernel dilation (both dims)"}};
    w.small_params = {{"C", 3}, {"H", 7}, {"W", 6}, {"stride", 2}};
    w.build = [](const WorkloadParams& p) {
      const int64_t N = get(p, "N"), C = get(p, "C"), H = get(p, "H"), W = get(p, "W");
      const int64_t R = get(p, "R"), S = get(p, "S");
      const int64_t st = get(p, "stride"), pad = get(p, "pad"), dil = get(p, "dilation");
      const int64_t Ho = conv_out_size(H, R, st, pad, dil, "kernel R");
      const int64_t Wo = conv_out_size(W, S, st, pad, dil, "kernel S");
      Tensor X = placeholder({N, C, H, W}, "data");
      Tensor Wt = placeholder({C, 1, R, S}, "kernel");
      Tensor P = pad_tensor(X, {0, 0, pad, pad}, {0, 0, pad, pad}, "pad");
      Var ry = reduce_axis(R, "ry"), rx = reduce_axis(S, "rx");
      Tensor out = compute(
          {N, C, Ho, Wo},
          [&](Var n, Var c, Var h, Var x) {
            return sum(P(n, c, h * Expr(st) + ry * Expr(dil), x * Expr(st) + rx * Expr(dil)) *
                           Wt(c, Expr(0), ry, rx),
                       {ry, rx});
          },
          "conv");
      return ComputeDAG({X, Wt}, {out});
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "transposed_conv2d";
    w.description =
        "transposed 2-D convolution, data NCHW, kernel CKRS; out = (H-1)*stride - 2*pad + R. "
        "Computed without the zero taps of the dilated input: stage 'phases' holds, per output "
        "phase (h % stride, w % stride), a unit-stride conv of 'pad' (the input padded) with that "
        "phase's kernel taps ('kernel_taps', zero-padded when stride does not divide R or S); "
        "'conv' interleaves the phases. FLOPs are the dilated form's";
    w.params = {{"N", 1, "batch"},          {"C", 128, "input channels"},
                {"H", 14, "input height"},  {"W", 14, "input width"},
                {"K", 64, "output channels"},
                {"R", 4, "kernel height"},  {"S", 4, "kernel width"},
                {"stride", 2, "stride (both dims)"},
                {"pad", 1, "padding removed from every side of the output (<= R-1, S-1)", 0}};
    w.small_params = {{"C", 3}, {"H", 4}, {"W", 5}, {"K", 2}, {"R", 3}, {"S", 4}};
    w.build = [](const WorkloadParams& p) {
      const int64_t N = get(p, "N"), C = get(p, "C"), H = get(p, "H"), W = get(p, "W");
      const int64_t K = get(p, "K"), R = get(p, "R"), S = get(p, "S");
      const int64_t st = get(p, "stride"), pad = get(p, "pad");
      if (pad > R - 1 || pad > S - 1) {
        throw LoomError("params.pad: must be at most min(R, S) - 1 for transposed_conv2d");
      }
      // out[n,k,h,w] = sum data[n,c,y,x] * kernel[c,k,r,s] over y*st + r - pad = h,
      // x*st + s - pad = w. With h = st*a + b (phase b): h + pad = st*(a + q) + t
      // for q = (b + pad) / st and t = (b + pad) % st, so r = t + st*j and
      // y = a + q - j for j in [0, ceil(R / st)): each phase is a unit-stride
      // conv with taps t, t + st, ... of the kernel, and no tap meets a zero.
      const int64_t Ho = (H - 1) * st - 2 * pad + R, Wo = (W - 1) * st - 2 * pad + S;
      const int64_t Jy = (R + st - 1) / st, Jx = (S + st - 1) / st;
      const int64_t Ay = (Ho + st - 1) / st, Ax = (Wo + st - 1) / st;
      const int64_t q_max = (st - 1 + pad) / st;
      Tensor X = placeholder({N, C, H, W}, "data");
      Tensor Wt = placeholder({C, K, R, S}, "kernel");
      // y + Jy - 1 indexes the padded input: y runs from -(Jy - 1) to Ay - 1 + q_max.
      Tensor P = pad_tensor(X, {0, 0, Jy - 1, Jx - 1},
                            {0, 0, std::max<int64_t>(0, Ay + q_max - H), std::max<int64_t>(0, Ax + q_max - W)},
                            "pad");
      Tensor taps = Wt;
      if (R % st != 0 || S % st != 0) {
        taps = compute(
            {C, K, Jy * st, Jx * st},
            [&](Var c, Var k, Var r, Var s) {
              return select(r < Expr(R) && s < Expr(S), Wt(c, k, r, s), Expr(0.0f));
            },
            "kernel_taps");
      }
      Var rc = reduce_axis(C, "rc"), jy = reduce_axis(Jy, "ry"), jx = reduce_axis(Jx, "rx");
      Tensor phases = compute_with_axes(
          {N, K, st, st, Ay, Ax},
          [&](const std::vector<Var>& v) -> Expr {
            const Expr by = v[2] + Expr(pad), bx = v[3] + Expr(pad);
            return sum(P(v[0], rc, v[4] + by / Expr(st) - jy + Expr(Jy - 1),
                         v[5] + bx / Expr(st) - jx + Expr(Jx - 1)) *
                           taps(rc, v[1], by % Expr(st) + jy * Expr(st), bx % Expr(st) + jx * Expr(st)),
                       {rc, jy, jx});
          },
          "phases");
      Tensor out = compute(
          {N, K, Ho, Wo},
          [&](Var n, Var k, Var h, Var x) {
            return phases(n, k, h % Expr(st), x % Expr(st), h / Expr(st), x / Expr(st));
          },
          "conv");
      ComputeDAG dag({X, Wt}, {out});
      dag.set_nominal_flop_count(2.0 * N * K * Ho * Wo * C * R * S);
      return dag;
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "capsule_conv2d";
    w.description =
        "capsule 2-D convolution: data [N,H,W,cap,cap,C], kernel [R,S,cap,cap,C,K], "
        "out[n,h,w,i,j,k] = sum_{r,s,q,c} pad[n,h*st+r,w*st+s,i,q,c] * kernel[r,s,q,j,c,k]";
    w.params = {{"N", 1, "batch"},          {"H", 16, "input height"},
                {"W", 16, "input width"},   {"C", 32, "input channels"},
                {"K", 32, "output channels"},
                {"R", 3, "kernel height"},  {"S", 3, "kernel width"},
                {"stride", 1, "stride (both dims)"},
                {"pad", 1, "zero padding on every side", 0},
                {"capsule", 4, "capsule size (pose matrix is capsule x capsule)"}};
    w.small_params = {{"H", 5}, {"W", 4}, {"C", 2}, {"K", 3}, {"stride", 2}, {"capsule", 2}};
    w.build = [](const WorkloadParams& p) {
      const int64_t N = get(p, "N"), H = get(p, "H"), W = get(p, "W"), C = get(p, "C");
      const int64_t K = get(p, "K"), R = get(p, "R"), S = get(p, "S");
      const int64_t st = get(p, "stride"), pad = get(p, "pad"), cap = get(p, "capsule");
      const int64_t Ho = conv_out_size(H, R, st, pad, 1, "kernel R");
      const int64_t Wo = conv_out_size(W, S, st, pad, 1, "kernel S");
      Tensor X = placeholder({N, H, W, cap, cap, C}, "data");
      Tensor Wt = placeholder({R, S, cap, cap, C, K}, "kernel");
      Tensor P = pad_tensor(X, {0, pad, pad, 0, 0, 0}, {0, pad, pad, 0, 0, 0}, "pad");
      Var ry = reduce_axis(R, "ry"), rx = reduce_axis(S, "rx");
      Var rq = reduce_axis(cap, "rq"), rc = reduce_axis(C, "rc");
      Tensor out = compute(
          {N, Ho, Wo, cap, cap, K},
          [&](Var n, Var h, Var x, Var i, Var j, Var k) {
            return sum(P(n, h * Expr(st) + ry, x * Expr(st) + rx, i, rq, rc) *
                           Wt(ry, rx, rq, j, rc, k),
                       {ry, rx, rq, rc});
          },
          "conv");
      return ComputeDAG({X, Wt}, {out});
    };
    out.push_back(std::move(w));
  }
}

}  // namespace workload_detail
}  // namespace loom
