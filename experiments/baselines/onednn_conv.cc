// oneDNN baselines for the convolutions: conv1d/2d/3d, dilated, grouped,
// depthwise (groups = C), conv2d_bias_relu (bias + ReLU post-op),
// transposed_conv2d (deconvolution) and capsule_conv2d (a plain convolution
// over strided views: batch = capsule row i, input channels = (q, c), output
// channels = (j, k); its kernel is permuted to OIHW once, outside the timing,
// like any weight prepacking).
#include "experiments/baselines/onednn_util.h"

namespace loom {
namespace onednn {

namespace {

struct ConvShape {
  std::string layout;         // "NCW", "NCHW", "NCDHW"
  int64_t N = 1, C = 1, K = 1, G = 1;
  dims in, ker, out;          // spatial extents
  int64_t stride = 1, pad = 0, dil = 1;
};

ConvShape read_conv(const Task& t, const std::vector<const char*>& sp, const std::vector<const char*>& kp) {
  ConvShape s;
  s.layout = sp.size() == 1 ? "NCW" : sp.size() == 2 ? "NCHW" : "NCDHW";
  s.N = param(t, "N");
  s.C = param(t, "C");
  s.stride = param(t, "stride");
  s.pad = param(t, "pad");
  s.dil = t.params.contains("dilation") ? param(t, "dilation") : 1;
  for (size_t d = 0; d < sp.size(); ++d) {
    s.in.push_back(param(t, sp[d]));
    s.ker.push_back(param(t, kp[d]));
    s.out.push_back((s.in[d] + 2 * s.pad - s.dil * (s.ker[d] - 1) - 1) / s.stride + 1);
  }
  return s;
}

dims cat(dims a, const dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A convolution with bias and/or ReLU as a Spec over NC<spatial> / (G)OI<spatial>.
Spec conv_spec(const ConvShape& c, const TensorMap& in, bool bias_relu) {
  const size_t nd = c.in.size();
  Spec sp;
  sp.layout = c.layout;
  dims wdims = c.G == 1 ? dims{c.K, c.C} : dims{c.G, c.K / c.G, c.C / c.G};
  sp.ops.push_back({DNNL_ARG_SRC, plain(cat({c.N, c.C}, c.in)), Role::kActivation, in.at("data")});
  sp.ops.push_back({DNNL_ARG_WEIGHTS, plain(cat(wdims, c.ker)), Role::kWeight, in.at("kernel")});
  if (bias_relu) sp.ops.push_back({DNNL_ARG_BIAS, plain({c.K}), Role::kWeight, in.at("bias")});
  sp.ops.push_back({DNNL_ARG_DST, plain(cat({c.N, c.K}, c.out)), Role::kOutput, {}});
  const dims strides(nd, c.stride), dilates(nd, c.dil - 1), pads(nd, c.pad);
  sp.make = [=](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    using cf = dnnl::convolution_forward;
    const auto pk = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    if (bias_relu) {
      cf::desc desc(pk, alg, d[0], d[1], d[2], d[3], strides, dilates, pads, pads);
      return cf::primitive_desc(desc, relu_attr(), eng);
    }
    cf::desc desc(pk, alg, d[0], d[1], d[2], strides, dilates, pads, pads);
    return cf::primitive_desc(desc, eng);
  };
  return sp;
}

std::vector<BaselineResult> transposed(const Task& t, const TimingOptions& timing, const TensorMap& in,
                                       const TensorMap& ref) {
  const int64_t N = param(t, "N"), C = param(t, "C"), H = param(t, "H"), W = param(t, "W");
  const int64_t K = param(t, "K"), R = param(t, "R"), S = param(t, "S");
  const int64_t st = param(t, "stride"), pad = param(t, "pad");
  const int64_t Ho = (H - 1) * st - 2 * pad + R, Wo = (W - 1) * st - 2 * pad + S;
  // out[n,k,h*st-pad+r,w*st-pad+s] += data[n,c,h,w] * kernel[c,k,r,s]: oneDNN's
  // deconvolution with weights {OC=K, IC=C, R, S} stored as [C][K][R][S].
  Spec sp;
  sp.layout = "NCHW";
  sp.ops = {{DNNL_ARG_SRC, plain({N, C, H, W}), Role::kActivation, in.at("data")},
            {DNNL_ARG_WEIGHTS, strided({K, C, R, S}, {R * S, K * R * S, S, 1}), Role::kWeight,
             in.at("kernel")},
            {DNNL_ARG_DST, plain({N, K, Ho, Wo}), Role::kOutput, {}}};
  sp.make = [=](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    using df = dnnl::deconvolution_forward;
    df::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, d[0], d[1],
                  d[2], {st, st}, {pad, pad}, {pad, pad});
    return df::primitive_desc(desc, eng);
  };
  return run_spec(sp, timing, ref.at("conv"));
}

std::vector<BaselineResult> capsule(const Task& t, const TimingOptions& timing, const TensorMap& in,
                                    const TensorMap& ref) {
  const int64_t N = param(t, "N"), H = param(t, "H"), W = param(t, "W"), C = param(t, "C");
  const int64_t K = param(t, "K"), R = param(t, "R"), S = param(t, "S");
  const int64_t st = param(t, "stride"), pad = param(t, "pad"), cap = param(t, "capsule");
  if (N != 1) {
    return {unsupported_baseline("onednn", "",
                                 "capsule_conv2d with N > 1: the batch and capsule-row dims of "
                                 "data[N,H,W,cap,cap,C] do not merge into one strided batch dim")};
  }
  const int64_t Ho = (H + 2 * pad - R) / st + 1, Wo = (W + 2 * pad - S) / st + 1;
  // out[0,h,w,i,(j,k)] = sum_{r,s,(q,c)} data[0,h*st+r-pad,w*st+s-pad,i,(q,c)] * Wp[(j,k),(q,c),r,s]
  // with Wp[(j,k),(q,c),r,s] = kernel[r,s,q,j,c,k].
  const std::vector<float>& ker = in.at("kernel");
  std::vector<float> wp(ker.size());
  for (int64_t r = 0; r < R; ++r)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t q = 0; q < cap; ++q)
        for (int64_t j = 0; j < cap; ++j)
          for (int64_t c = 0; c < C; ++c)
            for (int64_t k = 0; k < K; ++k) {
              int64_t src = ((((r * S + s) * cap + q) * cap + j) * C + c) * K + k;
              int64_t dst = (((j * K + k) * cap * C + q * C + c) * R + r) * S + s;
              wp[dst] = ker[src];
            }
  Spec sp;
  sp.layout = "capsule";
  sp.ops = {{DNNL_ARG_SRC, strided({cap, cap * C, H, W}, {cap * C, 1, W * cap * cap * C, cap * cap * C}),
             Role::kActivation, in.at("data")},
            {DNNL_ARG_WEIGHTS, plain({cap * K, cap * C, R, S}), Role::kWeight, wp},
            {DNNL_ARG_DST,
             strided({cap, cap * K, Ho, Wo}, {cap * K, 1, Wo * cap * cap * K, cap * cap * K}),
             Role::kOutput, {}}};
  sp.make = [=](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    using cf = dnnl::convolution_forward;
    cf::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, d[0], d[1],
                  d[2], {st, st}, {0, 0}, {pad, pad}, {pad, pad});
    return cf::primitive_desc(desc, eng);
  };
  return run_spec(sp, timing, ref.at("conv"));
}

}  // namespace

std::vector<BaselineResult> conv_family(const Task& task, const TimingOptions& timing,
                                        const TensorMap& in, const TensorMap& ref, bool* handled) {
  *handled = true;
  const std::string& w = task.workload;
  if (w == "conv1d" || w == "conv2d" || w == "dilated_conv2d" || w == "group_conv2d" || w == "conv3d" ||
      w == "depthwise_conv2d" || w == "conv2d_bias_relu") {
    ConvShape c = w == "conv1d"   ? read_conv(task, {"L"}, {"R"})
                  : w == "conv3d" ? read_conv(task, {"D", "H", "W"}, {"T", "R", "S"})
                                  : read_conv(task, {"H", "W"}, {"R", "S"});
    if (w == "depthwise_conv2d") {
      c.K = c.C;
      c.G = c.C;
    } else {
      c.K = param(task, "K");
      if (w == "group_conv2d") c.G = param(task, "groups");
    }
    const bool bias_relu = w == "conv2d_bias_relu";
    return run_spec(conv_spec(c, in, bias_relu), timing, ref.at(bias_relu ? "relu" : "conv"));
  }
  if (w == "transposed_conv2d") return transposed(task, timing, in, ref);
  if (w == "capsule_conv2d") return capsule(task, timing, in, ref);
  *handled = false;
  return {};
}

}  // namespace onednn
}  // namespace loom
