// The MLP's matrix products run in OpenBLAS (LibTorch's BLAS on Debian):
// its kernels must be the CPU's, not OpenBLAS's SSE3 fallback.
#include <gtest/gtest.h>

#include <cstdlib>

#include "costmodel/blas_kernels.h"
#include "costmodel/cost_model.h"

namespace loom {
namespace {

TEST(BlasKernels, AnMlpLeavesOpenBlasOnTheKernelsOfThisCpu) {
  if (std::getenv("OPENBLAS_CORETYPE")) GTEST_SKIP() << "the user chose OpenBLAS's kernels";
  auto mlp = make_cost_model("mlp", {});
  const std::string core = openblas_core_name();
  if (core.empty()) GTEST_SKIP() << "no OpenBLAS in this process (LibTorch uses another BLAS)";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "no AVX2+FMA: OpenBLAS's SSE3 kernels are the right ones";
  EXPECT_NE(core, "Prescott") << select_openblas_kernels();
}

TEST(BlasKernels, OpenBlasRunsOnTheThreadCountItIsGiven) {
  auto mlp = make_cost_model("mlp", {});  // loads LibTorch's BLAS
  if (openblas_core_name().empty()) GTEST_SKIP() << "no OpenBLAS in this process (LibTorch uses another BLAS)";
  const int before = openblas_threads();
  set_openblas_threads(1);
  EXPECT_EQ(openblas_threads(), 1);
  set_openblas_threads(2);
  EXPECT_EQ(openblas_threads(), 2);
  set_openblas_threads(before);
}

TEST(BlasKernels, ACoreTypeThatHoldsAnAvx512CpuToNarrowerKernelsIsNoted) {
  const char* chosen = std::getenv("OPENBLAS_CORETYPE");
  if (!chosen) GTEST_SKIP() << "no OPENBLAS_CORETYPE in the environment";
  auto mlp = make_cost_model("mlp", {});
  const std::string core = openblas_core_name();
  __builtin_cpu_init();
  if (core.empty() || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq"))
    GTEST_SKIP() << "no OpenBLAS or no AVX-512";
  if (core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids") {
    EXPECT_EQ(select_openblas_kernels(), "");
  } else {
    EXPECT_NE(select_openblas_kernels().find(std::string("OPENBLAS_CORETYPE=") + chosen), std::string::npos)
        << select_openblas_kernels();
  }
}

}  // namespace
}  // namespace loom
