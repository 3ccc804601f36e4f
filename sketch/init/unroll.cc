// Auto-unroll: every stage with reduce loops (tiled stages, rfactor stages)
// gets auto_unroll_max_step$N on its outermost loop, N drawn from
// settings.auto_unroll_options; the backend unrolls the nests below it that
// have at most N steps.
#include "sketch/analysis.h"
#include "sketch/annotation.h"

namespace loom {

State annotate_unroll(const State& state, AnnotationContext& ctx) {
  const auto& options = ctx.task.settings.auto_unroll_options;
  if (options.empty()) return state;
  State s = state;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!sketch_analysis::has_loops(st) || !sketch_analysis::has_reduce_iter(st)) continue;
    const int n = options[random_below(ctx.rng, options.size())];
    s = s.pragma(static_cast<int>(i), 0, "auto_unroll_max_step$" + std::to_string(n));
  }
  return s;
}

}  // namespace loom
