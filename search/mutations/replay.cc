#include "ir/error.h"
#include "search/mutation_rule.h"

namespace loom {

std::optional<State> replay_with(const State& s, const std::vector<StepPtr>& steps) {
  try {
    return State::replay(s.dag_ptr(), steps);
  } catch (const LoomError&) {
    return std::nullopt;
  }
}

}  // namespace loom
