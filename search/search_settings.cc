#include "search/search_settings.h"

#include "ir/error.h"

namespace loom {

namespace {

template <typename T>
void read(const nlohmann::json& j, const std::string& path, const char* key, T& out, T lo, T hi) {
  if (!j.contains(key)) return;
  const auto& v = j[key];
  std::string where = path + "." + key;
  if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw LoomError(where + ": expected an integer, got " + v.dump());
    auto x = v.get<int64_t>();
    if (x < static_cast<int64_t>(lo) || x > static_cast<int64_t>(hi))
      throw LoomError(where + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = static_cast<T>(x);
  } else {
    if (!v.is_number()) throw LoomError(where + ": expected a number, got " + v.dump());
    double x = v.get<double>();
    if (x < lo || x > hi)
      throw LoomError(where + ": expected a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = x;
  }
}

}  // namespace

SearchSettings SearchSettings::from_json(const nlohmann::json& j, const std::string& path) {
  SearchSettings s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw LoomError(path + ": expected an object");
  static const char* keys[] = {"num_trials", "measures_per_round", "eps_greedy", "population",
                               "generations", "mutation_prob", "crossover_prob",
                               "init_measured_ratio", "init_min_fresh", "early_stopping",
                               "model_warmup_records", "seed", "strategy", "task_scheduler",
                               "scheduler_alpha", "scheduler_beta", "scheduler_window",
                               "scheduler_eps", "confirm_top", "confirm_rounds", "tile_cap"};
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* key : keys) known |= k == key;
    if (!known) throw LoomError(path + "." + k + ": unknown key");
  }
  read(j, path, "num_trials", s.num_trials, 1, 10000000);
  read(j, path, "measures_per_round", s.measures_per_round, 1, 100000);
  read(j, path, "eps_greedy", s.eps_greedy, 0.0, 1.0);
  read(j, path, "population", s.population, 1, 1000000);
  read(j, path, "generations", s.generations, 0, 1000);
  read(j, path, "mutation_prob", s.mutation_prob, 0.0, 1.0);
  read(j, path, "crossover_prob", s.crossover_prob, 0.0, 1.0);
  read(j, path, "init_measured_ratio", s.init_measured_ratio, 0.0, 1.0);
  read(j, path, "init_min_fresh", s.init_min_fresh, 0, 1000000);
  read(j, path, "early_stopping", s.early_stopping, 0, 1000000);
  read(j, path, "model_warmup_records", s.model_warmup_records, 0, 1000000);
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned() && !(j["seed"].is_number_integer() && j["seed"].get<int64_t>() >= 0))
      throw LoomError(path + ".seed: expected a non-negative integer");
    s.seed = j["seed"].get<uint64_t>();
  }
  if (j.contains("strategy")) {
    if (!j["strategy"].is_string() || (j["strategy"] != "evolutionary" && j["strategy"] != "random"))
      throw LoomError(path + ".strategy: expected \"evolutionary\" or \"random\"");
    s.strategy = j["strategy"].get<std::string>();
  }
  if (j.contains("task_scheduler")) {
    if (!j["task_scheduler"].is_string() ||
        (j["task_scheduler"] != "gradient" && j["task_scheduler"] != "round_robin"))
      throw LoomError(path + ".task_scheduler: expected \"gradient\" or \"round_robin\"");
    s.task_scheduler = j["task_scheduler"].get<std::string>();
  }
  read(j, path, "scheduler_alpha", s.scheduler_alpha, 0.0, 1.0);
  read(j, path, "scheduler_beta", s.scheduler_beta, 0.0, 1e6);
  read(j, path, "scheduler_window", s.scheduler_window, 1, 1000);
  read(j, path, "scheduler_eps", s.scheduler_eps, 0.0, 1.0);
  read(j, path, "confirm_top", s.confirm_top, 0, 100000);
  read(j, path, "confirm_rounds", s.confirm_rounds, 0, 1000);
  read(j, path, "tile_cap", s.tile_cap, 0.0, 1.0);
  if (j.contains("tile_cap") && s.tile_cap <= 0) throw LoomError(path + ".tile_cap: must be above 0");
  if (s.mutation_prob + s.crossover_prob > 1.0)
    throw LoomError(path + ": mutation_prob + crossover_prob must not exceed 1");
  return s;
}

nlohmann::json SearchSettings::to_json() const {
  return {{"num_trials", num_trials}, {"measures_per_round", measures_per_round},
          {"eps_greedy", eps_greedy}, {"population", population}, {"generations", generations},
          {"mutation_prob", mutation_prob}, {"crossover_prob", crossover_prob},
          {"init_measured_ratio", init_measured_ratio}, {"init_min_fresh", init_min_fresh},
          {"early_stopping", early_stopping}, {"model_warmup_records", model_warmup_records},
          {"seed", seed}, {"strategy", strategy}, {"task_scheduler", task_scheduler}, {"scheduler_alpha", scheduler_alpha},
          {"scheduler_beta", scheduler_beta}, {"scheduler_window", scheduler_window},
          {"scheduler_eps", scheduler_eps}, {"confirm_top", confirm_top}, {"confirm_rounds", confirm_rounds},
          {"tile_cap", tile_cap}};
}

}  // namespace loom
