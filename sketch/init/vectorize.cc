// Vectorize: the innermost spatial loops of every stage, as many as keep the
// product of their extents <= settings.max_vectorize_size (only the innermost
// one in a tiled stage, whose inner tiles are not contiguous), stopping at a
// reduce loop, an annotated loop or a loop where another stage is computed;
// a random number of them (at least one) is fused and vectorized. The
// innermost loop must come from the dimension the stage's buffer stores
// last (its last axis unless an SL step says otherwise), so the store is
// stride-1 across the vector lanes. A packing copy computed inside its
// reader (pack_reused_input) vectorizes its innermost loop, whatever the
// tile's width.
#include "sketch/analysis.h"
#include "sketch/annotation.h"

namespace loom {

namespace {

using namespace sketch_analysis;

}  // namespace

State annotate_vectorize(const State& state, AnnotationContext& ctx) {
  State s = state;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!has_loops(st) || st.leaves.empty() || st.op->axes.empty()) continue;
    if (!descends_from(st, st.leaves.back(), st.innermost_storage_dim())) continue;
    if (is_packing_copy(s, static_cast<int>(i))) {
      // Its loops span the whole tensor in the State; lowering bounds them
      // to the packed tile, whose rows are what the vector lanes copy.
      const int last = static_cast<int>(st.leaves.size()) - 1;
      if (st.iters[st.leaves[last]].annotation == IterAnnotation::kNone)
        s = s.annotate(static_cast<int>(i), last, IterAnnotation::kVectorize);
      continue;
    }
    int64_t product = 1;
    size_t n = 0;
    while (n < st.leaves.size()) {
      const int id = st.leaves[st.leaves.size() - 1 - n];
      const Iterator& it = st.iters[id];
      if (!stages_attached_at(s, static_cast<int>(i), id).empty()) break;
      if (it.kind == IterKind::kReduce || it.annotation != IterAnnotation::kNone) break;
      if (is_tiled(st) && n != 0) break;
      if (product * it.extent > ctx.task.settings.max_vectorize_size) break;
      product *= it.extent;
      ++n;
    }
    if (n == 0 || product == 1) continue;  // nothing to gain from one lane
    if (n > 1) n = 1 + random_below(ctx.rng, n);
    const int last = static_cast<int>(st.leaves.size()) - 1;
    const int first = last - static_cast<int>(n) + 1;
    if (n > 1) {
      std::vector<int> span;
      for (int p = first; p <= last; ++p) span.push_back(p);
      s = s.fuse(static_cast<int>(i), span);
    }
    s = s.annotate(static_cast<int>(i), first, IterAnnotation::kVectorize);
  }
  return s;
}

}  // namespace loom
