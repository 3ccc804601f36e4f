// OpenBLAS baselines (the only file that includes cblas.h): cblas_sgemm for
// the matrix products (matmul; batch_matmul and tbg as a loop of sgemm calls,
// tbg's transposes expressed by leading dimensions and CblasTrans;
// dense_bias_relu as sgemm plus a bias + ReLU loop, both timed) and
// cblas_snrm2 for norm. Everything runs on the workload's own row-major
// buffers; nothing is prepacked.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "costmodel/blas_kernels.h"
#include "experiments/baselines/baseline.h"

#ifdef LOOM_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace loom {

#ifdef LOOM_HAVE_OPENBLAS

namespace {

int64_t param(const Task& t, const char* k) { return t.params.at(k).get<int64_t>(); }

BaselineResult result(const std::string& variant) {
  BaselineResult r;
  r.library = "openblas";
  r.variant = variant;
  r.inputs_as_given = true;  // cblas packs inside the call
  r.impl = openblas_core_name();
  const std::string& note = select_openblas_kernels();
  if (!note.empty()) r.impl += " (" + note + ")";
  return r;
}

}  // namespace

std::vector<BaselineResult> run_openblas_baselines(const Task& task, const TimingOptions& timing,
                                                   const TensorMap& in, const TensorMap& ref) {
  select_openblas_kernels();
  openblas_set_num_threads(task.target.threads);
  const std::string& w = task.workload;
  if (w == "matmul" || w == "batch_matmul") {
    const int64_t Bt = w == "batch_matmul" ? param(task, "B") : 1;
    const int64_t M = param(task, "M"), N = param(task, "N"), K = param(task, "K");
    const float* A = in.at("A").data();
    const float* B = in.at("B").data();
    std::vector<float> C(Bt * M * N);
    auto run = [&] {
      for (int64_t b = 0; b < Bt; ++b) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, A + b * M * K, K,
                    B + b * K * N, N, 0.f, C.data() + b * M * N, N);
      }
    };
    return {measure_baseline(result(Bt > 1 ? "row-major, sgemm per batch" : "row-major sgemm"), run,
                             [&] { return C; }, ref.at("C"), timing)};
  }
  if (w == "dense_bias_relu") {
    const int64_t M = param(task, "M"), N = param(task, "N"), K = param(task, "K");
    const float* X = in.at("X").data();
    const float* W = in.at("W").data();
    const float* bias = in.at("bias").data();
    std::vector<float> C(M * N);
    auto run = [&] {
      // relu = max(X * W^T + bias, 0): W[N,K] is B transposed.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.f, X, K, W, K, 0.f, C.data(), N);
      for (int64_t i = 0; i < M; ++i) {
        float* row = C.data() + i * N;
        for (int64_t j = 0; j < N; ++j) row[j] = std::max(row[j] + bias[j], 0.f);
      }
    };
    return {measure_baseline(result("row-major sgemm + bias/ReLU loop"), run, [&] { return C; },
                             ref.at("relu"), timing)};
  }
  if (w == "tbg") {
    const int64_t B = param(task, "B"), L = param(task, "L"), H = param(task, "H"), D = param(task, "D");
    const float* Q = in.at("query").data();
    const float* V = in.at("value").data();
    std::vector<float> O(B * H * L * L);
    auto run = [&] {
      // out[b,h] (L x L) = Q[b,:,h,:] (L x D, ld H*D) * V[b,:,h,:]^T.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h) {
          const float* q = Q + b * L * H * D + h * D;
          const float* v = V + b * L * H * D + h * D;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, L, L, D, 1.f, q, H * D, v, H * D, 0.f,
                      O.data() + (b * H + h) * L * L, L);
        }
    };
    return {measure_baseline(result("BLHD, strided sgemm per (b, h)"), run, [&] { return O; },
                             ref.at("out"), timing)};
  }
  if (w == "norm") {
    const int64_t M = param(task, "M"), N = param(task, "N");
    const std::vector<float>& A = in.at("A");
    std::vector<float> out(1);
    auto run = [&] { out[0] = cblas_snrm2(M * N, A.data(), 1); };
    return {measure_baseline(result("snrm2"), run, [&] { return out; }, ref.at("norm"), timing)};
  }
  const std::string what = w.find("conv") != std::string::npos ? "convolution"
                           : w == "softmax"                      ? "softmax"
                                                                 : w;
  return {unsupported_baseline("openblas", "",
                               "BLAS has no " + what +
                                   " routine (OpenBLAS baselines: matmul, batch_matmul, "
                                   "dense_bias_relu, tbg, norm)")};
}

#else

std::vector<BaselineResult> run_openblas_baselines(const Task&, const TimingOptions&, const TensorMap&,
                                                   const TensorMap&) {
  return {unsupported_baseline("openblas", "", "Loom was built without OpenBLAS (libopenblas-dev)")};
}

#endif

}  // namespace loom
