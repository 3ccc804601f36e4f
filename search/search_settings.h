// Settings of the search (evolutionary search + search policy loop + task
// scheduler): one struct, and one table (search_settings.cc) of
// {key, member, range, doc} (defaults: the members' initializers) that drives
// the strict parsing of the config's "search" object (unknown keys are
// errors), the start-up echo (to_json) and the documentation table (`loom
// config doc`, pasted into experiments/README.md and checked by a test).
// Defaults follow the Ansor implementation unless noted.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace loom {

enum class SearchStrategy : uint8_t {
  kEvolutionary,  // Ansor: evolutionary search under the learned cost model
  kRandom,        // pure random search (the ablation baseline): no model, no evolution
};

enum class TaskSchedulerKind : uint8_t {
  kGradient,    // Ansor's gradient-based task scheduler
  kRoundRobin,  // one round per task in turn
};

struct SearchSettings {
  int num_trials = 1000;
  double time_budget_s = 0;  // 0: none
  int measures_per_round = 64;
  int first_round_measures = 0;  // 0: measures_per_round
  double eps_greedy = 0.05;
  int transfer_per_round = 2;
  int population = 2048;
  int generations = 4;
  double mutation_prob = 0.85;
  double crossover_prob = 0.05;
  double init_measured_ratio = 0.2;
  int init_min_fresh = 50;
  int early_stopping = 0;
  int model_warmup_records = 64;
  uint64_t seed = 0;
  SearchStrategy strategy = SearchStrategy::kEvolutionary;
  TaskSchedulerKind task_scheduler = TaskSchedulerKind::kGradient;
  double scheduler_alpha = 0.2;
  double scheduler_beta = 2.0;
  int scheduler_window = 3;
  double scheduler_eps = 0.05;
  int confirm_top = 8;
  int confirm_rounds = 3;

  static SearchSettings from_json(const nlohmann::json& j, const std::string& path = "search");
  nlohmann::json to_json() const;
  // The Markdown rows (`| key | meaning | range | default |`) of every setting, in
  // the table's order, keys prefixed by `prefix` (e.g. "search.").
  static std::string doc_table(const std::string& prefix = "search.");
};

}  // namespace loom
