// The CPU init rules in Ansor's order; see annotation.h.
#include "sketch/annotation.h"

namespace loom {

State random_annotate(const State& sketch, AnnotationContext& ctx) {
  State s = fill_tile_sizes(sketch, ctx);
  s = change_compute_locations(s, ctx);
  s = annotate_parallel(s, ctx);
  s = annotate_unroll(s, ctx);
  return annotate_vectorize(s, ctx);
}

}  // namespace loom
