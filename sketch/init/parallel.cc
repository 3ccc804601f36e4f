// Parallel: the outer spatial loops of every root stage are fused until the
// fused loop has enough iterations for the threads (threads *
// parallel_chunks_per_thread) or reaches a loop where another stage is
// computed, and the fused loop is parallelized. When those outer loops have
// a single iteration, the stages computed inside (and the loops after) are
// parallelized instead.
#include "sketch/analysis.h"
#include "sketch/annotation.h"

namespace loom {

namespace {

using namespace sketch_analysis;

State parallelize_outer_loops(State s, int stage, int first_pos, AnnotationContext& ctx) {
  const int64_t enough = static_cast<int64_t>(ctx.task.threads) * ctx.task.settings.parallel_chunks_per_thread;
  const Stage& st = s.stage(stage);
  std::vector<int> to_fuse;
  int64_t degree = 1;
  size_t pos = first_pos;
  for (; pos < st.leaves.size(); ++pos) {
    const Iterator& it = st.iters[st.leaves[pos]];
    if (it.kind == IterKind::kReduce || it.annotation != IterAnnotation::kNone) break;
    to_fuse.push_back(static_cast<int>(pos));
    degree *= it.extent;
    if (degree > enough) break;
    if (!stages_attached_at(s, stage, st.leaves[pos]).empty()) break;
  }
  if (degree == 1 && pos < st.leaves.size()) {
    std::vector<int> inner = stages_attached_at(s, stage, st.leaves[pos]);
    if (!inner.empty()) {
      for (int a : inner) s = parallelize_outer_loops(s, a, 0, ctx);
      s = parallelize_outer_loops(s, stage, static_cast<int>(pos) + 1, ctx);
    }
  }
  if (to_fuse.empty()) return s;
  if (to_fuse.size() > 1) s = s.fuse(stage, to_fuse);
  return s.annotate(stage, to_fuse.front(), IterAnnotation::kParallel);
}

}  // namespace

State annotate_parallel(const State& state, AnnotationContext& ctx) {
  State s = state;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!has_loops(st) || st.compute_at != ComputeAtKind::kRoot) continue;
    s = parallelize_outer_loops(s, static_cast<int>(i), 0, ctx);
  }
  return s;
}

}  // namespace loom
