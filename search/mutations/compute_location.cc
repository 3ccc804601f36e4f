// Compute-location mutation: move a compute_at stage to another loop of its
// target (or to the root), keeping the rest of the history.
#include "ir/steps.h"
#include "search/mutation_rule.h"

namespace loom {
namespace {

class ComputeLocationMutation : public MutationRule {
 public:
  const char* name() const override { return "compute_location"; }

  std::optional<State> apply(const State& s, MutationContext& ctx) const override {
    std::vector<size_t> cas = steps_of_type<ComputeAtStep>(s);
    if (cas.empty()) return std::nullopt;
    for (int attempt = 0; attempt < 4; ++attempt) {
      size_t idx = cas[ctx.rng() % cas.size()];
      const auto& ca = static_cast<const ComputeAtStep&>(*s.steps()[idx]);
      // The target's loop count at the time of the step: replay the prefix.
      std::vector<StepPtr> prefix(s.steps().begin(), s.steps().begin() + idx);
      auto before = replay_with(s, prefix);
      if (!before) return std::nullopt;
      int n_loops = static_cast<int>(before->stage(ca.target_stage).leaves.size());
      if (n_loops < 2) continue;
      int pos = static_cast<int>(ctx.rng() % (n_loops - 1));
      if (pos >= ca.target_iter) ++pos;
      auto mutated = std::make_shared<ComputeAtStep>(ca);
      mutated->target_iter = pos;
      std::vector<StepPtr> steps = s.steps();
      steps[idx] = mutated;
      if (auto r = replay_with(s, steps)) return r;
    }
    return std::nullopt;
  }
};

}  // namespace

std::shared_ptr<const MutationRule> make_compute_location_mutation() {
  return std::make_shared<ComputeLocationMutation>();
}

}  // namespace loom
