#include "codegen/cpu_loop_passes.h"

#include "codegen/reciprocal_divisors.h"
#include "codegen/vector_reductions.h"

namespace loom {

LoweredFunc prepare_cpu_loops(const LoweredFunc& f, int vector_width) {
  return multiply_by_reciprocals(vectorize_reduction_loops(f, vector_width));
}

}  // namespace loom
