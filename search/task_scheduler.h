// Allocating measurement rounds across tasks (Ansor §6): every task first
// gets one round; then, with probability 1 - eps, the task whose next round
// is expected to cut the weighted total latency most — the one with the most
// negative gradient
//   w_i * (alpha * backward_i + (1 - alpha) * forward_i)
// where backward_i is the change of its best latency per trial over the last
// `window` rounds, and forward_i = min(-best_i / trials_i,
// beta * flops_i / max_similar_throughput - best_i) (similar tasks: the same
// workload) — and otherwise a random unfinished task. Round-robin is the
// comparison.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "search/search_settings.h"

namespace loom {

struct TaskProgress {
  std::string group;          // similarity group (workload name)
  double weight = 1;
  double flops = 0;
  double best_cost = 0;       // seconds; +inf if nothing measured yet
  int trials = 0;
  std::vector<double> best_history;  // best cost after each of its rounds
  bool finished = false;      // early-stopped
};

class TaskScheduler {
 public:
  explicit TaskScheduler(const SearchSettings& settings) : settings_(settings) {}
  // Index of the task to tune next, or -1 when every task is finished.
  int next(const std::vector<TaskProgress>& tasks, std::mt19937_64& rng) const;
  // The gradient used for task i (for logs and tests).
  double gradient(const std::vector<TaskProgress>& tasks, size_t i) const;

 private:
  SearchSettings settings_;
};

}  // namespace loom
