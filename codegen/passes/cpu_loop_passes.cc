#include "codegen/passes/cpu_loop_passes.h"

#include "codegen/passes/reciprocal_divisors.h"
#include "codegen/passes/vector_reductions.h"
#include "codegen/passes/zero_padding_taps.h"

namespace loom {

LoweredFunc prepare_cpu_loops(const LoweredFunc& f, int vector_width) {
  return multiply_by_reciprocals(vectorize_reduction_loops(skip_zero_padding_taps(f), vector_width));
}

}  // namespace loom
