// Random annotation of a sketch (Ansor's init-population rules, CPU): fills
// the holes a sketch leaves with random low-level choices, in this order —
// tile sizes, compute locations of free stages, parallel outer loops, the
// auto-unroll pragma, vectorized inner loops. Each is one file in
// sketch/init/. Every choice ends up as a decision on a step (split lengths,
// CA target loop, FU span, PR value), so a mutation can edit it and replay.
#pragma once

#include <random>

#include "ir/state.h"
#include "sketch/sketch_task.h"
#include "sketch/split_factorization.h"

namespace loom {

struct AnnotationContext {
  const SketchTask& task;
  SplitFactorizationMemo& memo;
  std::mt19937_64& rng;
};

// Replays the sketch with random lengths for every SP step (FSP/FFSP follow).
State fill_tile_sizes(const State& sketch, AnnotationContext& ctx);
// Free stages (not tiled, no data reuse, not outputs): inlined, at root, or
// computed at a loop of their consumer, at random.
State change_compute_locations(const State& s, AnnotationContext& ctx);
// Outer spatial loops of root stages fused and parallelized.
State annotate_parallel(const State& s, AnnotationContext& ctx);
// auto_unroll_max_step$N on the outermost loop of stages with reduce loops.
State annotate_unroll(const State& s, AnnotationContext& ctx);
// Innermost spatial loop(s) fused and vectorized when short enough.
State annotate_vectorize(const State& s, AnnotationContext& ctx);

// All of the above, in order: a complete program from a sketch.
State random_annotate(const State& sketch, AnnotationContext& ctx);

// Uniform integer in [0, n) (n > 0): modulo, so results do not depend on the
// standard library's distribution implementation.
inline uint64_t random_below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }

}  // namespace loom
