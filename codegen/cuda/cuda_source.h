// Loop nest -> CUDA C source (a module of `extern "C" __global__` kernels).
//
// No CUDA header is needed here: the source is plain text, compiled to PTX by
// NVRTC (codegen/cuda/nvrtc.h) and loaded with the driver API
// (codegen/cuda/cuda_driver.h) where the toolkit and a device exist.
//
// Mapping:
//  - Each top-level statement of the lowered function (one root stage's
//    nest) becomes one kernel, launched in order. Root temps (buffers of
//    root stages that are not outputs) are device buffers the runner
//    allocates; every kernel takes all args then all root temps.
//  - Loops bound to blockIdx.* / threadIdx.* become the hardware index; the
//    grid / block dimension is the largest extent bound to it in the kernel
//    (a smaller loop is guarded). At most 1024 threads per block.
//  - A thread loop nested in a loop bound to the same threadIdx dimension is
//    the cooperative fetch of a shared stage (lowering relaxes the outer
//    thread variable for shared stages): allowed when all it stores to is
//    shared memory.
//  - vthread loops are serial loops inside each thread (no TVM-style
//    virtual-thread injection: a vthread tile is computed after the other).
//  - Shared-scope allocations are `__shared__` arrays (hoisted to the kernel
//    top, at most 48 KiB per block), local-scope ones per-thread arrays.
//  - `__syncthreads()` before and after every run of statements of a
//    sequence that write shared memory (the cooperative fetch). A barrier
//    that would sit in a thread-dependent branch is an error.
//  - Vectorized loops: float4 / float2 copies when the body is one store of
//    a load, both stride 1 in the loop and provably aligned; otherwise a
//    loop with `#pragma unroll`. Unrolled loops and auto-unroll pragmas give
//    `#pragma unroll`.
//  - Cross-thread reductions (a reduce loop bound to threadIdx.x): a
//    register per thread, a block allreduce, one store of the result
//    (codegen/cuda/cross_thread_reduction.h). A global store outside every
//    thread loop of a kernel with threads is done by thread 0 when its value
//    is the same in all threads (it reads no local buffer a thread loop
//    wrote); otherwise it is an error.
//  - Index arithmetic is 32-bit (`loom_idx`, every buffer must have fewer
//    than 2^31 elements).
// Schedules the GPU cannot run correctly (a global store outside some
// bound loop of its kernel, an accumulation racing across threads that is
// not a recognised cross-thread reduction, too many
// threads, too much shared memory) throw LoomError: an invalid schedule.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace loom {

struct CudaSourceOptions {
  int max_threads_per_block = 1024;
  int64_t max_shared_bytes_per_block = 48 * 1024;  // static __shared__ limit
  int64_t max_local_floats = 4096;                 // per-thread array limit
  std::array<int64_t, 3> max_grid = {2147483647, 65535, 65535};
  std::array<int64_t, 3> max_block = {1024, 1024, 64};
};

struct CudaKernelInfo {
  std::string name;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_bytes = 0;  // static __shared__ bytes
  int64_t threads() const { return block[0] * block[1] * block[2]; }
};

struct CudaModuleSource {
  std::string source;                   // cuda_prelude() + code
  std::string code;                     // the kernels only
  std::vector<CudaKernelInfo> kernels;  // launch order
  std::vector<Buffer> args;             // f.args
  std::vector<Buffer> temps;            // root temps: device buffers
  // Kernel parameters, in order: args then temps (float*).
  std::vector<std::string> param_names() const;
};

// Helpers every module starts with (several modules' `code` may share one
// prelude in one NVRTC program when their kernel names differ).
const char* cuda_prelude();

// Throws LoomError for schedules the GPU cannot run (see above).
CudaModuleSource emit_cuda_source(const LoweredFunc& f, const CudaSourceOptions& opts = {});

}  // namespace loom
