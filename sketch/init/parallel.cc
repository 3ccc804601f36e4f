// Parallel: the outer spatial loops of every root stage are fused until the
// fused loop has enough iterations for the threads (threads *
// parallel_chunks_per_thread) or reaches a loop where another stage is
// computed, and the fused loop is parallelized. When those outer loops have
// a single iteration, the stages computed inside (and the loops after) are
// parallelized instead.
//
// With more than one thread, a root stage without a reduction that feeds a
// single reader (a conv's padded input) first gets, as its outermost loop,
// the dimension that the reader's first axis moves (the padding's rows,
// moved by the output rows; the output channels move none of it). Tiled
// loop nests keep the axes in order at every level, so the consumer's
// threads mostly split the first of its axes that is split at all; when
// that is the output rows, each thread now pads the rows it reads itself.
// Split by channels, half of what every thread reads was written by the
// other core and moves between their caches at every call
// (docs/results/2026-12-05-root-padding-split-by-rows-zen5.md). When the
// threads split the output channels,
// each reads all of the padding, whatever its order.

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

State align_with_reader(const State& s, int stage, const AnnotationContext& ctx) {
  if (ctx.task.threads <= 1) return s;
  const Stage& st = s.stage(stage);
  if (!st.loops_untouched() || has_reduce_iter(st)) return s;
  const int dim = dim_moved_by_first_reader_axis(s, stage);
  // The innermost dimension stays innermost: it is the contiguous, vector one.
  if (dim < 0 || dim + 1 >= static_cast<int>(st.leaves.size())) return s;
  bool outermost_already = true;
  for (int d = 0; d < dim; ++d) outermost_already = outermost_already && st.iters[st.leaves[d]].extent == 1;
  if (outermost_already) return s;
  std::vector<int> order = {dim};
  for (int d = 0; d < static_cast<int>(st.leaves.size()); ++d)
    if (d != dim) order.push_back(d);
  return s.reorder(stage, order);
}

}  // namespace

State annotate_parallel(const State& state, AnnotationContext& ctx) {
  State s = state;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!has_loops(st) || st.compute_at != ComputeAtKind::kRoot) continue;
    s = align_with_reader(s, static_cast<int>(i), ctx);
    s = parallelize_outer_loops(s, static_cast<int>(i), 0, ctx);
  }
  return s;
}

}  // namespace loom
