// Parallel-granularity mutation: fuse one loop more or one loop fewer into a
// parallelized fused loop. Later steps of that stage that address loops after
// the fused ones are shifted so they keep addressing the same loops.
#include "ir/steps.h"
#include "search/mutation_rule.h"

namespace loom {
namespace {

// Shifts leaf positions >= `from` of `stage` in a copy of `step` by `delta`;
// nullptr when the step kind cannot be shifted safely.
// With delta < 0 (a loop is absorbed into the fused one), a step addressing
// the absorbed loop `from` cannot be kept: the whole mutation is dropped.
struct Unshiftable {};

StepPtr shifted_or_throw(const StepPtr& step, int stage, int from, int delta) {
  auto shift = [&](int pos) {
    if (delta < 0 && pos == from) throw Unshiftable{};
    return pos >= from ? pos + delta : pos;
  };
  if (step->stage_id() != stage) {
    if (auto* ca = dynamic_cast<const ComputeAtStep*>(step.get()); ca && ca->target_stage == stage) {
      auto c = std::make_shared<ComputeAtStep>(*ca);
      c->target_iter = shift(ca->target_iter);
      return c;
    }
    return step;
  }
  if (auto* an = dynamic_cast<const AnnotationStep*>(step.get())) {
    auto c = std::make_shared<AnnotationStep>(*an);
    c->iter = shift(an->iter);
    return c;
  }
  if (auto* pr = dynamic_cast<const PragmaStep*>(step.get())) {
    auto c = std::make_shared<PragmaStep>(*pr);
    c->iter = shift(pr->iter);
    return c;
  }
  if (auto* sp = dynamic_cast<const SplitStep*>(step.get())) {
    auto c = std::make_shared<SplitStep>(*sp);
    c->iter = shift(sp->iter);
    return c;
  }
  if (auto* fu = dynamic_cast<const FuseStep*>(step.get())) {
    auto c = std::make_shared<FuseStep>(*fu);
    for (int& p : c->iters) p = shift(p);
    return c;
  }
  return nullptr;
}

class ParallelGranularityMutation : public MutationRule {
 public:
  const char* name() const override { return "parallel_granularity"; }

  std::optional<State> apply(const State& s, MutationContext& ctx) const override {
    // Fuse steps immediately followed by a parallel annotation of the fused loop.
    std::vector<size_t> candidates;
    const auto& steps = s.steps();
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
      auto* fu = dynamic_cast<const FuseStep*>(steps[i].get());
      auto* an = dynamic_cast<const AnnotationStep*>(steps[i + 1].get());
      if (fu && an && an->annotation == IterAnnotation::kParallel && an->stage == fu->stage &&
          an->iter == fu->iters.front())
        candidates.push_back(i);
    }
    if (candidates.empty()) return std::nullopt;
    size_t idx = candidates[ctx.rng() % candidates.size()];
    const auto& fu = static_cast<const FuseStep&>(*steps[idx]);
    int delta = (ctx.rng() % 2) ? 1 : -1;
    if (fu.iters.size() + delta < 1) delta = 1;
    auto mutated = std::make_shared<FuseStep>(fu);
    if (delta > 0) mutated->iters.push_back(fu.iters.back() + 1);
    else mutated->iters.pop_back();
    // Loops after the fused ones move by -delta (one loop fewer/more remains).
    std::vector<StepPtr> out(steps.begin(), steps.begin() + idx);
    out.push_back(mutated);
    int from = fu.iters.front() + 1;  // first loop after the fused one
    try {
      for (size_t i = idx + 1; i < steps.size(); ++i) {
        StepPtr st = shifted_or_throw(steps[i], fu.stage, from, -delta);
        if (!st) return std::nullopt;
        out.push_back(st);
      }
    } catch (const Unshiftable&) {
      return std::nullopt;
    }
    return replay_with(s, out);
  }
};

}  // namespace

std::shared_ptr<const MutationRule> make_parallel_granularity_mutation() {
  return std::make_shared<ParallelGranularityMutation>();
}

}  // namespace loom
