// The CPU and GPU mutation lists with Ansor's weights, and the neighbour
// rules the search policy applies to the best measured states. Adding a rule
// means adding one line here and one file beside this one.
#include "search/mutation_rule.h"

namespace loom {

std::vector<WeightedMutation> cpu_mutation_rules() {
  return {
      {make_tile_size_mutation(), 0.90},
      {make_compute_location_mutation(), 0.05},
      {make_auto_unroll_mutation(), 0.04},
      {make_parallel_granularity_mutation(), 0.01},
  };
}

// Ansor's GPU weights: tile size 0.90, auto-unroll 0.10.
std::vector<WeightedMutation> gpu_mutation_rules() {
  return {
      {make_tile_size_mutation(), 0.90},
      {make_auto_unroll_mutation(), 0.10},
  };
}

std::vector<std::shared_ptr<const MutationRule>> cpu_neighbour_rules() { return {make_innermost_length_mutation()}; }

std::vector<std::shared_ptr<const MutationRule>> gpu_neighbour_rules() { return {}; }

}  // namespace loom
