// Mutation rules for the evolutionary search. A mutation edits the decisions
// recorded on a state's steps (split lengths, unroll depth, fused-parallel
// extent, compute location) and replays the history, so histories never grow.
// Rules are small classes behind one interface, collected with their weights
// in one per-target list (search/mutations/mutation_lists.cc).
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "ir/state.h"
#include "sketch/sketch_task.h"

namespace loom {

struct MutationContext {
  const SketchTask& task;
  std::mt19937_64& rng;
};

class MutationRule {
 public:
  virtual ~MutationRule() = default;
  virtual const char* name() const = 0;
  // A mutated state, or nullopt when the rule finds nothing to change or the
  // change does not replay.
  virtual std::optional<State> apply(const State& s, MutationContext& ctx) const = 0;
};

struct WeightedMutation {
  std::shared_ptr<const MutationRule> rule;
  double weight;
};

// Ansor's CPU weights: tile size 0.90, compute location 0.05, auto-unroll
// 0.04, parallel granularity 0.01.
std::vector<WeightedMutation> cpu_mutation_rules();
// Ansor's GPU weights: tile size 0.90, auto-unroll 0.10.
std::vector<WeightedMutation> gpu_mutation_rules();

// Rules the search policy applies to the best measured states each round
// to propose their neighbours without the model (search/search_policy.cc),
// in turn: CPU the innermost length, GPU none.
std::vector<std::shared_ptr<const MutationRule>> cpu_neighbour_rules();
std::vector<std::shared_ptr<const MutationRule>> gpu_neighbour_rules();

std::shared_ptr<const MutationRule> make_tile_size_mutation();
std::shared_ptr<const MutationRule> make_innermost_length_mutation();
std::shared_ptr<const MutationRule> make_compute_location_mutation();
std::shared_ptr<const MutationRule> make_auto_unroll_mutation();
std::shared_ptr<const MutationRule> make_parallel_granularity_mutation();

// Shared by the rules: a state's DAG replayed through `steps` (its history
// with some decisions edited); nullopt if that history no longer replays.
std::optional<State> replay_with(const State& s, const std::vector<StepPtr>& steps);
// The state with the split step at `split_step` given new lengths; nullopt
// when they are its own, their product exceeds the extent, or the history
// no longer replays.
std::optional<State> replay_with_split_lengths(const State& s, size_t split_step, std::vector<int64_t> lengths);
// Indices of steps of type T.
template <typename T>
std::vector<size_t> steps_of_type(const State& s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.steps().size(); ++i)
    if (dynamic_cast<const T*>(s.steps()[i].get())) out.push_back(i);
  return out;
}

}  // namespace loom
