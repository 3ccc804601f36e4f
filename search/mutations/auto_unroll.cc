// Auto-unroll mutation: another value for one auto_unroll_max_step pragma.
#include "ir/steps.h"
#include "search/mutation_rule.h"

namespace loom {
namespace {

class AutoUnrollMutation : public MutationRule {
 public:
  const char* name() const override { return "auto_unroll"; }

  std::optional<State> apply(const State& s, MutationContext& ctx) const override {
    std::vector<size_t> pragmas = steps_of_type<PragmaStep>(s);
    const auto& options = ctx.task.settings.auto_unroll_options;
    if (pragmas.empty() || options.size() < 2) return std::nullopt;
    size_t idx = pragmas[ctx.rng() % pragmas.size()];
    const auto& pr = static_cast<const PragmaStep&>(*s.steps()[idx]);
    std::string value;
    for (int attempt = 0; attempt < 8 && (value.empty() || value == pr.pragma); ++attempt)
      value = "auto_unroll_max_step$" + std::to_string(options[ctx.rng() % options.size()]);
    if (value == pr.pragma) return std::nullopt;
    auto mutated = std::make_shared<PragmaStep>(pr);
    mutated->pragma = value;
    std::vector<StepPtr> steps = s.steps();
    steps[idx] = mutated;
    return replay_with(s, steps);
  }
};

}  // namespace

std::shared_ptr<const MutationRule> make_auto_unroll_mutation() {
  return std::make_shared<AutoUnrollMutation>();
}

}  // namespace loom
