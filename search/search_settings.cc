#include "search/search_settings.h"

#include "ir/error.h"
#include "ir/settings_table.h"

namespace loom {

namespace {

// Every search setting, in the order of the docs table (the echo is a JSON
// object: sorted by key).
const SettingsTable<SearchSettings>& table() {
  using S = SearchSettings;
  static const SettingsTable<S> t({
      integer_setting("num_trials", &S::num_trials, 1, 10000000, "measurements in total, all tasks together"),
      number_setting("time_budget_s", &S::time_budget_s, 0, 1e8,
                     "wall-clock seconds a run of `loom tune` may search (`--time-budget 5m`): once a round ends "
                     "past it, the run stops as if its trials were spent and confirms each task's best programs; "
                     "a resumed run has a budget of its own. 0 = none"),
      integer_setting("measures_per_round", &S::measures_per_round, 1, 100000,
       "measured per round: the top predicted states not measured before (nor their loop nest under other steps), "
       "neighbours of the best measured programs "
       "by one innermost tile length (CPU: half as many as the random ones, rounded up), and `eps_greedy` random"),
      integer_setting("first_round_measures", &S::first_round_measures, 0, 100000,
       "measured in a task's first round (at most `measures_per_round`): with a few, every task of a network has "
       "a time soon and the task scheduler spends the rest where it pays; the schedule database's programs for "
       "the task lead it. 0 = `measures_per_round`; a network config that does not set it: 8"),
      number_setting("eps_greedy", &S::eps_greedy, 0, 1, "share of states per round sampled at random (without the model)"),
      integer_setting("transfer_per_round", &S::transfer_per_round, 0, 100000,
       "per round, up to this many of the best measured programs of the run's other tasks (in their rank order) whose "
       "steps replay on this task (the same stages and loop extents: a dilated conv and a conv of one shape) are "
       "measured first, without the model; 0 = off"),
      integer_setting("population", &S::population, 1, 1000000, "evolutionary population"),
      integer_setting("generations", &S::generations, 0, 1000, "evolutionary generations per round"),
      number_setting("mutation_prob", &S::mutation_prob, 0, 1, "probability that a child is a mutation of a parent"),
      number_setting("crossover_prob", &S::crossover_prob, 0, 1,
       "probability that a child is a crossover of two parents (else a copy); with `mutation_prob` at most 1"),
      number_setting("init_measured_ratio", &S::init_measured_ratio, 0, 1,
       "share of the initial population taken from the best measured states"),
      integer_setting("init_min_fresh", &S::init_min_fresh, 0, 1000000, "at least this many fresh samples in the initial population"),
      integer_setting("early_stopping", &S::early_stopping, 0, 1000000,
       "stop a task after this many rounds without improvement (0 = off)"),
      integer_setting("model_warmup_records", &S::model_warmup_records, 0, 1000000,
       "while the model has learned from fewer programs (a pretrained file's included), random scores instead"),
      unsigned_setting("seed", &S::seed, "the one seed all randomness flows from"),
      enum_setting("strategy", &S::strategy, {"evolutionary", "random"},
       "`evolutionary` (Ansor) or `random` (pure random search, the ablation baseline: no model, no evolution)"),
      enum_setting("task_scheduler", &S::task_scheduler, {"gradient", "round_robin"}, "`gradient` (Ansor) or `round_robin`"),
      number_setting("scheduler_alpha", &S::scheduler_alpha, 0, 1, "weight of the gradient scheduler's backward gradient"),
      number_setting("scheduler_beta", &S::scheduler_beta, 0, 1e6, "bound of its similarity-based forward gradient"),
      integer_setting("scheduler_window", &S::scheduler_window, 1, 1000, "its backward window, in rounds"),
      number_setting("scheduler_eps", &S::scheduler_eps, 0, 1, "its exploration: share of rounds given to a random task"),
      integer_setting("confirm_top", &S::confirm_top, 0, 100000,
       "after the budget, each task's `confirm_top` best programs are measured `confirm_rounds` more times (not "
       "trials; appended to the log) and the best is the program with the lowest median over all its "
       "measurements: the fastest of a thousand single measurements on a shared machine is partly luck. "
       "0 = off (Ansor's behaviour)"),
      integer_setting("confirm_rounds", &S::confirm_rounds, 0, 1000, "re-measurements of each confirmed program"),
  });
  return t;
}

}  // namespace

SearchSettings SearchSettings::from_json(const nlohmann::json& j, const std::string& path) {
  SearchSettings s = table().parse(j, path);
  if (s.mutation_prob + s.crossover_prob > 1.0)
    throw LoomError(path + ": mutation_prob + crossover_prob must not exceed 1");
  return s;
}

nlohmann::json SearchSettings::to_json() const { return table().to_json(*this); }

std::string SearchSettings::doc_table(const std::string& prefix) { return table().doc_rows(prefix); }

}  // namespace loom
