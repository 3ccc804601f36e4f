// Reduction loops as vector code, for both CPU backends (LLVM IR and C
// source). A serial loop whose whole body folds one term per iteration into
// an accumulator element that the loop does not move,
//
//   for k in 0..E:  acc[i] = acc[i] + f(k)        (also *, max, min)
//
// is a chain of E dependent scalar operations (a 768-long row sum: 768 adds
// at 4 cycles each). It is rewritten into loops the vector emitters already
// handle: partial results of A lanes in a local buffer (A = up to 4 native
// vectors, so up to 4 independent accumulators), one vectorized pass per A
// terms, a narrower pass for the tail, a halving tree that folds the lanes
// into lane 0, and one scalar fold into acc[i]. This is the "rfactor into
// whole vectors, horizontal reduction at the end" that a reduction over the
// innermost axis needs; it changes the order of the floating-point
// operations (as any vectorized reduction does), not the result beyond
// rounding.
//
// Only terms whose loads are contiguous in k, or strided by at most 4 (one
// wide load and a shuffle), are rewritten: a gather per vector would not pay
// for itself. Loops inside vectorized loops, unroll-annotated loops and short
// loops are left as they are.
#pragma once

#include "ir/stmt.h"

namespace loom {

// The shortest reduction loop rewritten.
constexpr int64_t kMinVectorReductionExtent = 8;

// `f` with its reduction loops rewritten for vectors of `vector_width`
// floats (no change for a width below 2). Only serial loops are candidates,
// so GPU thread loops are left alone. The partial-result buffers are added
// to f.temps as local buffers.
LoweredFunc vectorize_reduction_loops(const LoweredFunc& f, int vector_width);

}  // namespace loom
