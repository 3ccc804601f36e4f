#include "ir/error.h"
#include "ir/steps.h"
#include "search/mutation_rule.h"

namespace loom {

std::optional<State> replay_with(const State& s, const std::vector<StepPtr>& steps) {
  try {
    return State::replay(s.dag_ptr(), steps);
  } catch (const LoomError&) {
    return std::nullopt;
  }
}

std::optional<State> replay_with_split_lengths(const State& s, size_t split_step, std::vector<int64_t> lengths) {
  const auto& sp = static_cast<const SplitStep&>(*s.steps()[split_step]);
  int64_t prod = 1;
  for (int64_t l : lengths) prod *= l;
  if (prod > sp.extent || lengths == sp.lengths) return std::nullopt;
  auto mutated = std::make_shared<SplitStep>(sp);
  mutated->lengths = std::move(lengths);
  std::vector<StepPtr> steps = s.steps();
  steps[split_step] = mutated;
  return replay_with(s, steps);
}

}  // namespace loom
