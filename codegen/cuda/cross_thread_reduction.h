// Cross-thread reductions in the CUDA backend.
//
// A reduction whose reduce loop is bound to threadIdx.x
// (sketch/gpu/cross_thread_reduction.cc) lowers, serially, to
//     B[I] = identity;
//     for r in threadIdx.x: ... B[I] = B[I] op f(r, ...) ...   (I free of r)
// which is correct as a serial loop nest (the C-backend check runs it so)
// but a race on B[I] when the loop is the block's threads. The CUDA
// emitter recognises the pair and emits instead:
//     float acc = identity;                     (a register per thread)
//     { r = threadIdx.x; ... acc = acc op f(r, ...) ... }   (guarded if needed)
//     acc = loom_block_allreduce_<op>(acc, loom_red_buf);   (every thread: barriers)
//     B[I] = acc;     (local B: every thread keeps the value; global B: thread 0)
// The allreduce reduces within each warp with __shfl_down_sync, then the
// warps' partial values through 32 floats of shared memory; every thread
// gets the result. It works for any blockDim.x <= 1024 (a partial last
// warp included), needs blockDim.y = blockDim.z = 1, and must be reached by
// all threads of the block (the emitter refuses it inside a
// thread-dependent branch or another thread loop).
#pragma once

#include <optional>
#include <string>

#include "ir/stmt.h"

namespace loom {

struct CrossThreadReduction {
  std::string buffer;  // B
  Expr index;          // I
  Expr identity;       // the init store's value
  ReduceKind kind = ReduceKind::kSum;
};

// The pattern above: `init` a store of the reduction's identity, `loop` a
// threadIdx.x loop whose every store accumulates into the same element
// with the matching combiner (sum / max / min). nullopt otherwise.
std::optional<CrossThreadReduction> match_cross_thread_reduction(const Stmt& init, const Stmt& loop);

// The accumulation store's value with its load of B[I] replaced by `acc`.
Expr accumulate_into(const CrossThreadReduction& r, const Expr& value, const Expr& acc);

// Device helpers for the prelude (loom_block_allreduce_sum/max/min), and
// the name of the one for a reduction kind.
const char* cuda_allreduce_helpers();
const char* cuda_allreduce_function(ReduceKind k);

// Name and size (floats) of the __shared__ scratch the helpers use.
constexpr const char* kCudaAllreduceBuffer = "loom_red_buf";
constexpr int kCudaAllreduceBufferFloats = 32;

}  // namespace loom
