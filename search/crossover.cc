#include "search/crossover.h"

#include <cstring>
#include <map>

#include "ir/step.h"
#include "search/mutation_rule.h"

namespace loom {

std::optional<State> crossover(const State& a, const State& b, std::mt19937_64& rng) {
  const auto& sa = a.steps();
  const auto& sb = b.steps();
  if (sa.size() != sb.size() || sa.empty()) return std::nullopt;
  for (size_t i = 0; i < sa.size(); ++i)
    if (std::strcmp(sa[i]->tag(), sb[i]->tag()) != 0 || sa[i]->stage_id() != sb[i]->stage_id())
      return std::nullopt;
  std::map<int, bool> from_b;  // stage id -> take parent b's steps
  bool any_a = false, any_b = false;
  std::vector<StepPtr> child;
  for (size_t i = 0; i < sa.size(); ++i) {
    int stage = sa[i]->stage_id();
    auto it = from_b.find(stage);
    if (it == from_b.end()) it = from_b.emplace(stage, rng() % 2 == 1).first;
    child.push_back(it->second ? sb[i] : sa[i]);
    (it->second ? any_b : any_a) = true;
  }
  if (!any_a || !any_b) return std::nullopt;  // a copy of one parent
  return replay_with(a, child);
}

}  // namespace loom
