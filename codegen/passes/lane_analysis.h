// How the lanes of a vectorized loop see an expression, and what a parallel
// loop's body uses: the analyses both CPU backends (LLVM IR and C source)
// share to decide what a kVectorized loop becomes and what an outlined
// parallel body is handed. Plain C++, no LLVM.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {

bool uses_var_id(const Expr& e, int64_t var_id);
bool contains_load(const Expr& e);

// If e == e|var=0 + stride*var for all values of var (affine with a constant
// coefficient), sets *stride and returns true.
bool linear_stride(const Expr& e, int64_t var_id, int64_t* stride);

// How an index varies over the lanes of the vector chunks of a loop
// (chunks of `width` lanes starting at multiples of width).
struct IndexPattern {
  enum Kind { kUniform, kContiguous, kChunkUniform, kGeneral } kind = kUniform;
  bool separable = false;  // index = g(other vars) + h(var), h tabulated
  bool injective = false;  // distinct lanes -> distinct elements (when known)
};
IndexPattern classify_index(const Expr& idx, int64_t var_id, int64_t extent, int width);

// Whether the loop `s` (kVectorized) can be emitted as vector code of
// `width` lanes: no allocation or vectorized loop inside, and no store that
// several lanes would make to one element.
bool can_vectorize(const Stmt& s, int width);

// Whether the iterations of the serial loop `s` are independent, so that it
// may run as vector chunks (what LLVM's loop vectorizer finds for the JIT):
// an innermost loop of stores and guards whose every store index is
// contiguous in the loop variable, and whose loads of a buffer it stores to
// read the very element each iteration stores.
bool iterations_independent(const Stmt& s);

// The loop variables and buffers that `s` uses (loads, stores, allocations):
// what the outlined body of a parallel loop must be handed.
void collect_uses(const Stmt& s, std::set<int64_t>* vars, std::set<std::string>* buffers);

}  // namespace loom
