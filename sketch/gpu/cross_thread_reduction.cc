// Cross-thread reduction (Ansor's GPU rule): a reduction with a small
// spatial extent against its reduce extent gets the threads of a block on
// its reduce loops instead of one thread per output element.
//
// Condition (Ansor's): a root, global, untiled reduction stage whose reduce
// extent R exceeds a warp (32); a stage that also has data reuse (matmul,
// conv: multi-level tiling applies) only when its spatial extent S is at
// most max_threads_per_block (1024) and S < R — otherwise the tiles already
// give enough threads. The rule is kApply: the following rules still make
// their sketch (plain threads per output, or cache-write + tiling), the
// search chooses.
//
// Apply, on reduction P with n spatial axes:
//   FU  P's reduce loops into one r (extent R)
//   SP  r -> [r.0, r.1], r.1 = the thread count: a hole filled by the GPU
//       annotation with a power of two in [32, min(R, 1024)]
//   AN  r.1 threadIdx.x (an SP directly followed by this AN marks the hole)
//   RE  r.1 before r.0: each thread loops over r.0 serially, so the loop
//       nest reads as "thread t accumulates its share, then the block
//       combines" — the form the CUDA backend turns into a block allreduce
//       (codegen/cuda/cross_thread_reduction.h).
// Then either P's spatial loops are fused and bound to blockIdx.x (one
// block per output element), or — when P's single consumer C is an
// untouched element-wise root stage reading P at C's first n axes — C is
// the kernel and P is computed at it: C's first n loops fused and bound to
// blockIdx.x; when C has more axes, its last one is split following P's
// thread split (FSP) and bound to threadIdx.x, so the block that reduced a
// row also writes the row (softmax: expsum at softmax's row loop); when it
// has none, C's single element per block is written by thread 0 (norm).
// P computed at C's blockIdx loop needs exactly one element: a register.
#include "ir/steps.h"
#include "sketch/analysis.h"
#include "sketch/gpu/gpu_rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

constexpr int64_t kWarpSize = 32;
constexpr int64_t kMaxThreadsPerBlock = 1024;  // GpuLimits' default (sm_90)

bool untouched(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (is_tiled(st)) return false;
  for (size_t p = 0; p < st.leaves.size(); ++p)
    if (st.leaves[p] != static_cast<int>(p) || st.iters[st.leaves[p]].annotation != IterAnnotation::kNone)
      return false;
  for (const Stage& other : s.stages())
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage) return false;
  return true;
}

// The consumer P can be computed at (see the top comment), or -1. P's
// fused reduce extent is `reduce`: C's last loop must be long enough to
// follow P's thread split.
int fusion_target(const State& s, int p, int64_t reduce) {
  const std::vector<int> direct = direct_consumers(s, p);
  const std::vector<int> effective = effective_consumers(s, p);
  if (direct.size() != 1 || effective.size() != 1 || direct[0] != effective[0]) return -1;
  const int c = direct[0];
  const Stage& cs = s.stage(c);
  if (!has_loops(cs) || cs.compute_at != ComputeAtKind::kRoot || cs.scope != BufferScope::kGlobal ||
      !cs.op->reduce_axes.empty() || needs_multi_level_tiling(s, c) || !untouched(s, c))
    return -1;
  const OpNode& pop = *s.stage(p).op;
  const size_t n = pop.axes.size(), nc = cs.op->axes.size();
  if (n == 0 || n > nc) return -1;
  if (nc > n && cs.op->axes.back()->extent < reduce) return -1;
  bool read = false;
  for (const auto& acc : collect_accesses(cs.op->body)) {
    if (acc.tensor != pop.name) continue;
    read = true;
    for (size_t d = 0; d < n; ++d) {
      const Expr& idx = acc.indices[d];
      if (idx->kind != ExprKind::kVar || idx->var_id != cs.op->axes[d]->var_id) return -1;
    }
  }
  return read ? c : -1;
}

std::vector<int> range(int first, int count) {
  std::vector<int> out;
  for (int k = first; k < first + count; ++k) out.push_back(k);
  return out;
}

class CrossThreadReductionRule : public SketchRule {
 public:
  std::string name() const override { return "gpu_cross_thread_reduction"; }

  RuleCondition condition(const SketchTask&, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    if (!has_loops(st) || st.op->reduce_axes.empty() || st.compute_at != ComputeAtKind::kRoot ||
        st.scope != BufferScope::kGlobal || !untouched(s, stage))
      return RuleCondition::kSkip;
    auto [space, reduce] = space_and_reduce_length(st);
    if (reduce <= kWarpSize) return RuleCondition::kSkip;
    if (needs_multi_level_tiling(s, stage) && (space > kMaxThreadsPerBlock || space >= reduce))
      return RuleCondition::kSkip;
    return RuleCondition::kApply;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& state, int p) const override {
    State s = state;
    const int n = static_cast<int>(s.stage(p).op->axes.size());
    const int m = static_cast<int>(s.stage(p).op->reduce_axes.size());
    const int64_t reduce = space_and_reduce_length(s.stage(p)).second;
    if (m > 1) s = s.fuse(p, range(n, m));
    s = s.split(p, n, {kWarpSize});
    const int thread_split = static_cast<int>(s.steps().size()) - 1;
    s = s.annotate(p, n + 1, IterAnnotation::kThreadX);
    std::vector<int> order = range(0, n);
    order.push_back(n + 1);
    order.push_back(n);
    s = s.reorder(p, order);

    const int c = fusion_target(state, p, reduce);
    if (c < 0) {
      if (n > 1) s = s.fuse(p, range(0, n));
      if (n > 0) s = s.annotate(p, 0, IterAnnotation::kBlockX);
      return {{s, p - 1}};
    }
    const int nc = static_cast<int>(s.stage(c).op->axes.size());
    if (nc > n) {
      s = s.follow_split(c, nc - 1, thread_split, 1);  // [.., last.0, last.1 = threads]
      s = s.annotate(c, nc, IterAnnotation::kThreadX);
    }
    if (n > 1) s = s.fuse(c, range(0, n));
    s = s.annotate(c, 0, IterAnnotation::kBlockX);
    s = s.compute_at(p, c, 0);
    return {{s, p - 1}};
  }
};

}  // namespace

SketchRulePtr make_gpu_cross_thread_reduction_rule() { return std::make_unique<CrossThreadReductionRule>(); }

bool is_cross_thread_split(const std::vector<StepPtr>& steps, size_t i) {
  auto* sp = dynamic_cast<const SplitStep*>(steps[i].get());
  if (!sp || sp->lengths.size() != 1 || i + 1 >= steps.size()) return false;
  auto* an = dynamic_cast<const AnnotationStep*>(steps[i + 1].get());
  return an && an->stage == sp->stage && an->iter == sp->iter + 1 && an->annotation == IterAnnotation::kThreadX;
}

}  // namespace loom
