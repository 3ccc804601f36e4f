// cuDNN baselines (legacy convolution API, NCHW fp32, CUDNN_FMA_MATH: no
// TF32) for conv2d, dilated_conv2d, group_conv2d and conv2d_bias_relu
// (cudnnConvolutionBiasActivationForward). The fastest algorithm found by
// cudnnFindConvolutionForwardAlgorithm is timed; its workspace is
// allocated outside the timed region.
#include "experiments/baselines/baseline.h"

#if defined(LOOM_HAVE_CUDA_BASELINES)
#include <cudnn.h>

#include <memory>

#include "experiments/baselines/cuda_util.h"
#endif

namespace loom {

#if defined(LOOM_HAVE_CUDA_BASELINES)
std::vector<BaselineResult> run_cudnn_baselines(const Task& task, const TimingOptions& timing,
                                                const TensorMap& in, const TensorMap& ref) {
  using namespace cuda_baseline;
  const std::string& w = task.workload;
  const bool fused = w == "conv2d_bias_relu";
  if (w != "conv2d" && w != "dilated_conv2d" && w != "group_conv2d" && !fused)
    return {unsupported_baseline("cudnn", "", "cuDNN baseline covers the 2-D convolutions only")};
  std::string problem = device_problem();
  if (!problem.empty()) return {unsupported_baseline("cudnn", "", problem)};
  const int N = static_cast<int>(param(task, "N")), C = static_cast<int>(param(task, "C")),
            H = static_cast<int>(param(task, "H")), W = static_cast<int>(param(task, "W")),
            K = static_cast<int>(param(task, "K")), R = static_cast<int>(param(task, "R")),
            S = static_cast<int>(param(task, "S")), stride = static_cast<int>(param(task, "stride")),
            pad = static_cast<int>(param(task, "pad")), dil = static_cast<int>(param(task, "dilation"));
  const int G = w == "group_conv2d" ? static_cast<int>(param(task, "groups")) : 1;
  cudnnHandle_t h;
  if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return {unsupported_baseline("cudnn", "", "cudnnCreate failed")};
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnActivationDescriptor_t ad;
  cudnnCreateTensorDescriptor(&xd);
  cudnnCreateTensorDescriptor(&yd);
  cudnnCreateTensorDescriptor(&bd);
  cudnnCreateFilterDescriptor(&wd);
  cudnnCreateConvolutionDescriptor(&cd);
  cudnnCreateActivationDescriptor(&ad);
  cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
  cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C / G, R, S);
  cudnnSetConvolution2dDescriptor(cd, pad, pad, stride, stride, dil, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  cudnnSetConvolutionGroupCount(cd, G);
  cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH);
  int on, ok, oh, ow;
  cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &ok, &oh, &ow);
  cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, ok, oh, ow);
  cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K, 1, 1);
  cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);

  std::vector<BaselineResult> out;
  {
    DeviceBuffer x(in.at("data")), wt(in.at("kernel")), y(static_cast<size_t>(on) * ok * oh * ow);
    std::unique_ptr<DeviceBuffer> bias;
    if (fused) bias = std::make_unique<DeviceBuffer>(in.at("bias"));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, 8, &found, perf);
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS) {
        algo = perf[i].algo;
        break;
      }
    size_t ws_bytes = 0;
    cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws_bytes);
    DeviceBuffer ws((ws_bytes + 3) / 4);
    const float one = 1.0f, zero = 0.0f;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    auto run = [&] {
      if (fused)
        status = cudnnConvolutionBiasActivationForward(h, &one, xd, x.p, wd, wt.p, cd, algo, ws.p, ws_bytes, &zero,
                                                       yd, y.p, bd, bias->p, ad, yd, y.p);
      else
        status = cudnnConvolutionForward(h, &one, xd, x.p, wd, wt.p, cd, algo, ws.p, ws_bytes, &zero, yd, y.p);
    };
    BaselineResult r;
    r.library = "cudnn";
    r.variant = fused ? "NCHW conv+bias+ReLU fused, fp32" : "NCHW, fp32";
    r.impl = "algo " + std::to_string(static_cast<int>(algo));
    r.inputs_as_given = true;  // NCHW in, KCRS weights, NCHW out
    run();
    if (status != CUDNN_STATUS_SUCCESS) {
      out.push_back(unsupported_baseline("cudnn", r.variant, cudnnGetErrorString(status)));
    } else {
      out.push_back(measure(r, run, [&] { return y.read(); }, ref.at(fused ? "relu" : "conv"), timing));
    }
  }
  cudnnDestroyActivationDescriptor(ad);
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroyFilterDescriptor(wd);
  cudnnDestroyTensorDescriptor(bd);
  cudnnDestroyTensorDescriptor(yd);
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroy(h);
  return out;
}
#else
std::vector<BaselineResult> run_cudnn_baselines(const Task&, const TimingOptions&, const TensorMap&,
                                                const TensorMap&) {
  return {unsupported_baseline("cudnn", "", "this build has no CUDA toolkit")};
}
#endif

}  // namespace loom
