// The loop-nest rewrites both CPU backends (the LLVM JIT and the C source)
// apply to a lowered program before they emit it, so that the exported C
// is the program that was timed. In order: reduction terms that read zero
// padding are skipped (codegen/passes/zero_padding_taps.h), reduction loops
// become vector code (codegen/passes/vector_reductions.h), then divisions by
// loop invariants in the innermost loops (the new ones included) become
// multiplications (codegen/passes/reciprocal_divisors.h).
#pragma once

#include "ir/stmt.h"

namespace loom {

// `vector_width`: floats per native vector; below 2, no vector rewrite.
LoweredFunc prepare_cpu_loops(const LoweredFunc& f, int vector_width);

}  // namespace loom
