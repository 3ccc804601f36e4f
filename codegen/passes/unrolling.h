// When the CPU code generator unrolls a loop at emission. Plain C++ (no
// LLVM): the LLVM emitter follows it, and the cost model's features report
// it, so both see the same register tile.
#pragma once

#include <cstdint>

#include "ir/stmt.h"

namespace loom {

// Emission-time unrolling beyond this many emitted steps falls back to a loop.
constexpr int64_t kMaxUnrolledSteps = 1 << 14;

// Total loop steps of a nest: stores count 1, loops multiply by their extent,
// vectorized loops count their body once (saturating).
int64_t nest_steps_vectorized(const Stmt& s);

// Whether `loop` is emitted unrolled: an unroll-annotated loop, or a plain
// loop under an auto_unroll_max_step `auto_unroll_limit` (0: none) whose
// nest has at most that many steps — never beyond kMaxUnrolledSteps.
bool unrolled_at_emission(const Stmt& loop, int64_t auto_unroll_limit);

}  // namespace loom
