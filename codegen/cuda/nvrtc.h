// CUDA C -> PTX with NVRTC, and the `ptxas` resource check. No CUDA header
// here: the implementation (nvrtc.cc) includes nvrtc.h only when the toolkit
// was found at build time (LOOM_HAVE_CUDA); otherwise every call throws.
#pragma once

#include <map>
#include <string>

namespace loom {

// True when this build has NVRTC.
bool nvrtc_available();

// Compiles `source` for `arch` ("sm_90": --gpu-architecture=compute_90 PTX).
// Throws LoomError carrying the compiler log on failure.
std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch,
                                std::string* log = nullptr);

struct PtxasKernelUsage {
  int registers = 0;
  int64_t shared_bytes = 0;   // static smem
  int64_t spill_bytes = 0;    // spill stores + loads
  int64_t stack_bytes = 0;
};

struct PtxasReport {
  std::map<std::string, PtxasKernelUsage> kernels;
  std::string log;
};

// Path of ptxas (/usr/local/cuda/bin/ptxas, or $LOOM_PTXAS); "" when absent.
std::string ptxas_path();

// Runs `ptxas -arch=ARCH -v` on the PTX and parses per-kernel registers and
// shared memory. Throws LoomError when ptxas fails (its log in the message).
PtxasReport run_ptxas(const std::string& ptx, const std::string& arch);

// "" when every kernel is within the sm_90 limits (255 registers per thread,
// 48 KiB static shared memory per block), else what is over.
std::string check_ptxas_limits(const PtxasReport& r, int max_registers = 255,
                               int64_t max_shared_bytes = 48 * 1024);

}  // namespace loom
