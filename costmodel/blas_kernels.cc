#include "costmodel/blas_kernels.h"

#include <cstdlib>

// OpenBLAS's entry points, weak: resolved at run time in whatever OpenBLAS
// the process loaded (through LibTorch or the baselines), null without one.
// gotoblas_dynamic_* exist in DYNAMIC_ARCH builds such as Debian's.
extern "C" char* openblas_get_corename(void) __attribute__((weak));
extern "C" void gotoblas_dynamic_init(void) __attribute__((weak));
extern "C" void gotoblas_dynamic_quit(void) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace loom {

std::string openblas_core_name() {
  if (openblas_get_corename == nullptr) return std::string();
  const char* name = openblas_get_corename();
  return name ? std::string(name) : std::string();
}

void set_openblas_threads(int threads) {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(threads < 1 ? 1 : threads);
}

int openblas_threads() { return openblas_get_num_threads != nullptr ? openblas_get_num_threads() : 0; }

namespace {

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

// OpenBLAS 0.3.21's kernel sets that use AVX-512.
bool avx512_kernels(const std::string& core) {
  return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
}

}  // namespace

const std::string& select_openblas_kernels() {
  static const std::string note = [] {
    if (const char* chosen = std::getenv("OPENBLAS_CORETYPE")) {
      // The user's choice stands, but a result should say when it holds
      // an AVX-512 CPU to narrower kernels (much slower sgemm).
      const std::string core = openblas_core_name();
      if (!core.empty() && has_avx512() && !avx512_kernels(core))
        return "OPENBLAS_CORETYPE=" + std::string(chosen) + ": no AVX-512 kernels on this AVX-512 CPU";
      return std::string();
    }
    if (openblas_core_name() != "Prescott") return std::string();
    if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) {
      return std::string("generic fallback kernels: set OPENBLAS_CORETYPE");
    }
    __builtin_cpu_init();
    const char* core = nullptr;
    if (has_avx512()) {
      core = "SkylakeX";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      core = "Haswell";
    }
    if (core == nullptr) return std::string();
    setenv("OPENBLAS_CORETYPE", core, 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
    return std::string("CPU unknown to OpenBLAS; kernels chosen by ISA");
  }();
  return note;
}

}  // namespace loom
