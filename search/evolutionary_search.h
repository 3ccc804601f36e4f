// Evolutionary search over complete States under a cost model (Ansor §5.1):
// starting from an initial population, each generation scores every state,
// keeps the best-scored distinct states seen so far, and breeds the next
// population by fitness-proportional selection: a child is a mutation
// (probability mutation_prob, rule drawn by weight), a crossover
// (crossover_prob) or a copy of its parent. Invalid children are discarded.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/state.h"
#include "search/mutation_rule.h"
#include "search/search_settings.h"
#include "sketch/sketch_task.h"

namespace loom {

// Higher is better; -inf marks a state that cannot be scored (e.g. does not lower).
using ScoreFn = std::function<std::vector<float>(const std::vector<State>&)>;

// Scores for a search without a trained model yet: uniform random for the
// states that lower, -inf for those that do not (a mutation may move a
// stage inside a loop its consumer runs outside of), so that invalid
// children are discarded before any model exists too.
std::vector<float> random_scores_of_valid(const std::vector<State>& states, std::mt19937_64& rng);

// Identity of a schedule: its step history as JSON text.
std::string state_key(const State& s);

struct EvolutionStats {
  int generations = 0;
  int scored = 0;            // distinct states scored (lowered + model)
  int population_total = 0;  // states over all generations, repeats included
  int mutations_tried = 0, mutations_ok = 0;
  int crossovers_tried = 0, crossovers_ok = 0;
  double seconds = 0, score_seconds = 0;
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(const SketchTask& task, SearchSettings settings,
                     std::vector<WeightedMutation> mutations);

  // Returns up to `num_out` distinct states, best predicted first, none of
  // whose keys is in `exclude`.
  std::vector<State> run(std::vector<State> init_population, const ScoreFn& score, int num_out,
                         const std::unordered_set<std::string>& exclude, std::mt19937_64& rng);

  const EvolutionStats& stats() const { return stats_; }

 private:
  std::optional<State> mutate(const State& s, std::mt19937_64& rng);
  // GPU tasks: the program fits the block's limits (sketch/gpu/gpu_rules.h).
  bool fits_target(const State& s) const;

  const SketchTask& task_;
  SearchSettings settings_;
  std::vector<WeightedMutation> mutations_;
  EvolutionStats stats_;
};

}  // namespace loom
