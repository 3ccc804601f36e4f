#include "sketch/sketch_policy.h"

#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "sketch/annotation.h"
#include "sketch/gpu/gpu_rules.h"
#include "sketch/sketch_rule.h"

namespace loom {

std::vector<State> generate_sketches(const SketchTask& task) {
  if (!task.dag) throw LoomError("sketch task has no DAG");
  const auto rules = sketch_rules_for(task);
  State init = State::initial(task.dag);
  // Breadth-first over partial sketches, as Ansor does: each round derives
  // one more stage of every partial sketch.
  std::vector<SketchState> now = {{init, static_cast<int>(init.stages().size()) - 1}};
  std::vector<State> out;
  while (!now.empty()) {
    std::vector<SketchState> next;
    for (const SketchState& p : now) {
      if (p.stage < 0) {
        out.push_back(p.state);
        continue;
      }
      for (const auto& rule : rules) {
        RuleCondition c = rule->condition(task, p.state, p.stage);
        if (c == RuleCondition::kSkip) continue;
        for (SketchState& r : rule->apply(task, p.state, p.stage)) next.push_back(std::move(r));
        if (c == RuleCondition::kApplyAndSkipRest) break;
      }
    }
    now = std::move(next);
  }
  return out;
}

SketchPolicy::SketchPolicy(SketchTask task) : task_(std::move(task)), sketches_(generate_sketches(task_)) {
  if (sketches_.empty()) throw LoomError("no sketch for this task");
}

State SketchPolicy::annotate(const State& sketch, std::mt19937_64& rng) {
  AnnotationContext ctx{task_, memo_, rng};
  return task_.is_gpu ? gpu_random_annotate(sketch, ctx) : random_annotate(sketch, ctx);
}

State SketchPolicy::sample_one(std::mt19937_64& rng) {
  const State& sketch = sketches_[random_below(rng, sketches_.size())];
  return annotate(sketch, rng);
}

std::vector<State> SketchPolicy::sample(int n, std::mt19937_64& rng) {
  std::vector<State> out;
  std::unordered_set<std::string> seen;
  const int64_t max_attempts = static_cast<int64_t>(n) * task_.settings.max_attempts_per_state;
  for (int64_t attempt = 0; attempt < max_attempts && static_cast<int>(out.size()) < n; ++attempt) {
    State s;
    try {
      s = sample_one(rng);
    } catch (const LoomError&) {
      // A GPU sketch whose draws did not fit the block's limits: another
      // draw. (A CPU annotation has no such outcome: its errors are bugs.)
      if (!task_.is_gpu) throw;
      continue;
    }
    if (seen.insert(s.steps_json().dump()).second) out.push_back(std::move(s));
  }
  return out;
}

std::vector<State> sample(const SketchTask& task, int n, std::mt19937_64& rng) {
  SketchPolicy policy(task);
  return policy.sample(n, rng);
}

}  // namespace loom
