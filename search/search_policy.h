// The per-task search policy (Ansor's sketch policy loop): each round it
// builds an initial population from fresh random samples and the best
// measured states, evolves it under the score function, and proposes the top
// predicted states not measured before plus an eps-greedy share of random
// ones. It keeps the task's measured set (for resume and deduplication) and
// its best result.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "measure/task.h"
#include "search/evolutionary_search.h"
#include "sketch/sketch_policy.h"

namespace loom {

// What sketch generation and annotation know of a task: its DAG, and from its
// target the threads, the vector width the LLVM backend will emit
// (Target::vector_width) and whether the GPU rules apply. The one way the
// tuner and the verbs make a SketchTask from a Task.
SketchTask make_sketch_task(const Task& task, const SketchSettings& settings = {});

// The seed of a round's random stream: a function of a stream's seed and the
// programs measured before the round, not of the rounds this process ran, so
// that a search resumed from its log proposes what it would have proposed
// uninterrupted (the task policies' and the tuner's streams alike).
inline uint64_t round_seed(uint64_t seed, int trials_before) {
  return seed ^ (static_cast<uint64_t>(trials_before) * 0x9e3779b97f4a7c15ULL);
}

class SearchPolicy {
 public:
  SearchPolicy(std::shared_ptr<const Task> task, SketchTask sketch_task, SearchSettings settings,
               std::vector<WeightedMutation> mutations, uint64_t seed);

  // Up to n states to measure next, none measured before. `transferred`:
  // programs of other tasks replayed on this one, best first; the first
  // `transfer_limit` of them not measured (-1: settings.transfer_per_round)
  // lead the batch (not in a random search).
  std::vector<State> next_batch(int n, const ScoreFn& score, const std::vector<State>& transferred = {},
                                int transfer_limit = -1);
  // Results of a measured batch (cost +inf for a failed candidate).
  void add_measured(const std::vector<State>& states, const std::vector<double>& costs);
  // Marks a step history as measured without a state (e.g. from a log whose
  // steps no longer replay).
  void add_measured_key(const std::string& key) { measured_.insert(key); }

  // The best program as chosen after measuring the top ones again
  // (Tuner::confirm), with its cost over all its measurements.
  void set_best(const State& state, double cost) { best_state_ = state, best_cost_ = cost; }

  const Task& task() const { return *task_; }
  std::shared_ptr<const Task> task_ptr() const { return task_; }
  double best_cost() const { return best_cost_; }
  const State& best_state() const { return best_state_; }
  int trials() const { return trials_; }
  int rounds() const { return rounds_; }
  int rounds_without_improvement() const { return stale_rounds_; }
  // The last kExhaustedRounds rounds found nothing new to measure: the
  // space is taken as exhausted (a copy task has a few dozen distinct
  // programs).
  static constexpr int kExhaustedRounds = 3;
  bool exhausted() const { return empty_rounds_ >= kExhaustedRounds; }
  const std::vector<double>& best_history() const { return best_history_; }  // per round
  // The best measured programs (cost, state), best first: at most
  // settings.population of them.
  const std::vector<std::pair<double, State>>& best_measured() const { return measured_good_; }
  const EvolutionStats& last_evolution() const { return evolution_.stats(); }
  double last_sample_seconds() const { return sample_seconds_; }
  SketchPolicy& sketches() { return sketch_policy_; }

 private:
  std::shared_ptr<const Task> task_;
  SearchSettings settings_;
  SketchPolicy sketch_policy_;
  EvolutionarySearch evolution_;
  uint64_t seed_;
  std::mt19937_64 rng_;  // re-seeded each round: round_seed(seed_, trials_)
  std::unordered_set<std::string> measured_;
  std::unordered_set<std::string> measured_nests_;  // loop_nest_key of every measured state
  // loop_nest_key of the last batch's states by state_key: add_measured
  // finds them here instead of lowering each measured state again.
  std::unordered_map<std::string, std::string> batch_nests_;
  std::vector<std::pair<double, State>> measured_good_;  // (cost, state), best first
  double best_cost_ = std::numeric_limits<double>::infinity();
  State best_state_;
  int trials_ = 0, rounds_ = 0, stale_rounds_ = 0, empty_rounds_ = 0;
  std::vector<double> best_history_;
  double sample_seconds_ = 0;
};

}  // namespace loom
