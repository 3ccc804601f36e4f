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

// The innermost tile of a schedule: "stage:innermost extent" of every SP
// split of a spatial iterator, by stage (for a GEMM, the register
// micro-kernel's rows and columns). Splits that follow another (FSP, FFSP:
// a cache stage's loops, sized by the outer tiles) are left out, so states
// of one kernel shape with other outer tiles, reduction depths, orders or
// annotations share it.
std::string innermost_tile_key(const State& s);

// How many of a round's `num_out` states one innermost tile may take under a
// tile cap: ceil(cap * num_out), at least 1.
int states_per_tile(double cap, int num_out);

// The first `num_out` of `ranked` (best first), at most
// states_per_tile(cap, num_out) of them with the same innermost tile; when too few other tiles are left,
// the skipped states fill the rest in rank order.
std::vector<State> select_with_tile_cap(const std::vector<State>& ranked, int num_out, double cap);

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

  // Returns up to `num_out` distinct states, best predicted first (within
  // `tile_cap`), none of whose keys is in `exclude`.
  std::vector<State> run(std::vector<State> init_population, const ScoreFn& score, int num_out,
                         const std::unordered_set<std::string>& exclude, std::mt19937_64& rng);

  const EvolutionStats& stats() const { return stats_; }

 private:
  std::optional<State> mutate(const State& s, std::mt19937_64& rng);

  const SketchTask& task_;
  SearchSettings settings_;
  std::vector<WeightedMutation> mutations_;
  EvolutionStats stats_;
};

}  // namespace loom
