#include "search/predicted_schedule.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "ir/error.h"
#include "measure/timing.h"
#include "search/mutation_rule.h"
#include "search/search_policy.h"

namespace loom {

PredictedSchedule predict_schedule(const Task& task, CostModel& model, const SearchSettings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchSettings s = settings;
  s.eps_greedy = 0;          // the model's picks only
  s.transfer_per_round = 0;  // nothing measured to transfer
  SketchTask st = make_sketch_task(task);
  SearchPolicy policy(std::make_shared<const Task>(task), st, s,
                      st.is_gpu ? gpu_mutation_rules() : cpu_mutation_rules(), s.seed);
  const ScoreFn score = [&](const std::vector<State>& states) { return model.predict(task, states); };
  // The evolution's best few, scored again together: the batch is in the
  // order the search took them, not by score.
  std::vector<State> picks = policy.next_batch(8, score);
  if (picks.empty()) throw LoomError(task.description() + ": no valid program to predict a schedule from");
  const std::vector<float> scores = model.predict(task, picks);
  size_t best = 0;
  for (size_t i = 1; i < picks.size(); ++i)
    if (std::isfinite(scores[i]) && (!std::isfinite(scores[best]) || scores[i] > scores[best])) best = i;
  PredictedSchedule out;
  out.state = picks[best];
  out.score = scores[best];
  out.scored = policy.last_evolution().scored;
  out.seconds = seconds_since(t0);
  return out;
}

}  // namespace loom
