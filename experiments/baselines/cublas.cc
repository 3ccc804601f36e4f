// cuBLAS baselines (fp32 SGEMM, default math mode: no TF32) for matmul and
// batch_matmul, on row-major operands (computed as the column-major
// transposed product). dense_bias_relu needs a fused bias+ReLU epilogue
// (cuBLASLt) and is reported unsupported for now. Only this file and
// cudnn.cc include CUDA library headers.
#include "experiments/baselines/baseline.h"

#if defined(LOOM_HAVE_CUDA_BASELINES)
#include <cublas_v2.h>

#include "experiments/baselines/cuda_util.h"
#endif

namespace loom {

#if defined(LOOM_HAVE_CUDA_BASELINES)
std::vector<BaselineResult> run_cublas_baselines(const Task& task, const TimingOptions& timing,
                                                 const TensorMap& in, const TensorMap& ref) {
  using namespace cuda_baseline;
  const std::string& w = task.workload;
  if (w != "matmul" && w != "batch_matmul")
    return {unsupported_baseline("cublas", "", "cuBLAS baseline covers matmul and batch_matmul only")};
  std::string problem = device_problem();
  if (!problem.empty()) return {unsupported_baseline("cublas", "", problem)};
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return {unsupported_baseline("cublas", "", "cublasCreate failed")};
  const int M = static_cast<int>(param(task, "M")), N = static_cast<int>(param(task, "N")),
            K = static_cast<int>(param(task, "K"));
  const int B = w == "batch_matmul" ? static_cast<int>(param(task, "B")) : 1;
  DeviceBuffer A(in.at("A")), Bm(in.at("B")), C(static_cast<size_t>(B) * M * N);
  const float one = 1.0f, zero = 0.0f;
  BaselineResult r;
  r.library = "cublas";
  r.variant = B > 1 ? "sgemm strided batched, fp32" : "sgemm, fp32";
  r.inputs_as_given = true;
  auto run = [&] {
    // Row-major C = A B  <=>  column-major C^T = B^T A^T.
    if (B == 1)
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, Bm.p, N, A.p, K, &zero, C.p, N);
    else
      cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, Bm.p, N,
                                static_cast<long long>(K) * N, A.p, K, static_cast<long long>(M) * K, &zero,
                                C.p, N, static_cast<long long>(M) * N, B);
  };
  BaselineResult out = measure(r, run, [&] { return C.read(); }, ref.at("C"), timing);
  cublasDestroy(h);
  return {out};
}
#else
std::vector<BaselineResult> run_cublas_baselines(const Task&, const TimingOptions&, const TensorMap&,
                                                 const TensorMap&) {
  return {unsupported_baseline("cublas", "", "this build has no CUDA toolkit")};
}
#endif

}  // namespace loom
