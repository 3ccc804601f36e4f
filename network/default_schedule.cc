#include "network/default_schedule.h"

#include "ir/error.h"

namespace loom::graph {

namespace {

// Leaf positions of the stage's spatial and reduce loops.
void leaf_kinds(const Stage& st, std::vector<int>* spatial, std::vector<int>* reduce) {
  spatial->clear();
  reduce->clear();
  for (size_t p = 0; p < st.leaves.size(); ++p)
    (st.iters[st.leaves[p]].kind == IterKind::kSpatial ? spatial : reduce)->push_back(static_cast<int>(p));
}

State schedule_root_stage(State s, int i, int threads, int vector_width) {
  std::vector<int> spatial, reduce;
  leaf_kinds(s.stage(i), &spatial, &reduce);
  if (spatial.empty()) return s;
  const bool vectorize = spatial.size() >= 2 || reduce.empty();
  if (!reduce.empty() && spatial.size() >= 2) {
    std::vector<int> order(spatial.begin(), spatial.end() - 1);
    order.insert(order.end(), reduce.begin(), reduce.end());
    order.push_back(spatial.back());
    s = s.reorder(i, order);
  }
  if (vectorize) {
    const int last = static_cast<int>(s.stage(i).leaves.size()) - 1;
    const int64_t extent = s.stage(i).iters[s.stage(i).leaves[last]].extent;
    int vec = last;
    if (extent > vector_width) {
      s = s.split(i, last, {vector_width});
      vec = last + 1;
    }
    if (extent > 1) s = s.annotate(i, vec, IterAnnotation::kVectorize);
  }
  if (threads > 1) {
    // The spatial loops outside the reductions and the vector loop.
    int outer = 0;
    while (outer < static_cast<int>(s.stage(i).leaves.size()) &&
           s.stage(i).iters[s.stage(i).leaves[outer]].kind == IterKind::kSpatial &&
           s.stage(i).iters[s.stage(i).leaves[outer]].annotation == IterAnnotation::kNone)
      ++outer;
    if (outer >= 2) {
      std::vector<int> fused;
      for (int p = 0; p < outer; ++p) fused.push_back(p);
      s = s.fuse(i, fused);
    }
    if (outer >= 1) s = s.annotate(i, 0, IterAnnotation::kParallel);
  }
  return s;
}

}  // namespace

State default_schedule(const std::shared_ptr<const ComputeDAG>& dag, int threads, int vector_width) {
  State s = State::initial(dag);
  for (int i = 0; i < static_cast<int>(s.stages().size()); ++i) {
    const Stage& st = s.stage(i);
    if (st.op->is_placeholder || dag->is_output(st.name()) || !st.op->reduce_axes.empty()) continue;
    try {
      s = s.compute_inline(i);
    } catch (const LoomError&) {
      // Left at the root (a stage that cannot be inlined).
    }
  }
  for (int i = 0; i < static_cast<int>(s.stages().size()); ++i) {
    const Stage& st = s.stage(i);
    if (st.op->is_placeholder || st.compute_at != ComputeAtKind::kRoot) continue;
    s = schedule_root_stage(s, i, threads, vector_width);
  }
  return s;
}

}  // namespace loom::graph
