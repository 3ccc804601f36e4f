#include "search/tuner.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <sstream>

#include "ir/error.h"
#include "measure/timing.h"

namespace loom {

namespace {
std::atomic<bool> g_stop{false};
using Clock = std::chrono::steady_clock;

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
}  // namespace

void Tuner::request_stop() { g_stop.store(true); }
bool Tuner::stop_requested() { return g_stop.load(); }

namespace {
TunerModels one_model(std::unique_ptr<CostModel> model) {
  TunerModels models;
  models.shared = std::move(model);
  return models;
}

// One model: shared; several: each task's own from the start.
TunerModels shared_or_per_task(std::vector<std::unique_ptr<CostModel>> models) {
  TunerModels out;
  if (models.size() == 1) out.shared = std::move(models.front());
  else out.per_task = std::move(models);
  return out;
}
}  // namespace

Tuner::Tuner(std::vector<TuneTask> tasks, TunerOptions options, std::unique_ptr<CostModel> model)
    : Tuner(std::move(tasks), std::move(options), one_model(std::move(model))) {}

Tuner::Tuner(std::vector<TuneTask> tasks, TunerOptions options, std::vector<std::unique_ptr<CostModel>> models)
    : Tuner(std::move(tasks), std::move(options), shared_or_per_task(std::move(models))) {}

Tuner::Tuner(std::vector<TuneTask> tasks, TunerOptions options, TunerModels models)
    : tasks_(std::move(tasks)),
      opts_(std::move(options)),
      shared_model_(std::move(models.shared)),
      own_models_(std::move(models.per_task)),
      own_model_after_(static_cast<size_t>(std::max(0, models.per_task_after))),
      scheduler_(opts_.search),
      rng_(opts_.search.seed) {
  if (tasks_.empty()) throw LoomError("nothing to tune: no tasks");
  if (!own_models_.empty() && own_models_.size() != tasks_.size())
    throw LoomError("tuner: " + std::to_string(own_models_.size()) + " cost models for " +
                    std::to_string(tasks_.size()) + " tasks (expected one shared model or one per task)");
  for (const auto& m : own_models_)
    if (!m) throw LoomError("tuner: a cost model is missing");
  if (models.per_task_after < 0) throw LoomError("tuner: a task's own model cannot take over after a negative count");
  has_own_model_.assign(tasks_.size(), !own_models_.empty() && own_model_after_ == 0);
  leading_.resize(tasks_.size());
  leading_gathered_.assign(tasks_.size(), false);
  awaiting_own_.resize(tasks_.size());
  if (!shared_model_ && shared_model_in_use())
    throw LoomError(own_models_.empty() ? "tuner: a cost model is missing"
                                        : "tuner: tasks score with the shared model until their own takes over, "
                                          "but there is no shared model");
  if (!opts_.print) opts_.print = [](const std::string& s) { std::printf("%s\n", s.c_str()); std::fflush(stdout); };
  measurer_ = opts_.measurer ? opts_.measurer : std::make_shared<Measurer>(opts_.measure);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const Task& t = *tasks_[i].task;
    check_task_fits_memory(t, opts_.measure.max_memory_mb);
    SketchTask st = make_sketch_task(t, opts_.sketch);
    // Each task's randomness: the config seed mixed with the task's position.
    uint64_t seed = opts_.search.seed * 0x9e3779b97f4a7c15ULL + i + 1;
    policies_.push_back(std::make_unique<SearchPolicy>(tasks_[i].task, st, opts_.search,
                                                       st.is_gpu ? gpu_mutation_rules() : cpu_mutation_rules(), seed));
  }
  if (opts_.resume && !opts_.log_path.empty()) resume_from_log();
  if (!opts_.log_path.empty()) log_ = std::make_unique<RecordLog>(opts_.log_path);
}

Tuner::~Tuner() = default;

void Tuner::resume_from_log() {
  LoadReport report;
  if (!std::filesystem::exists(opts_.log_path)) return;  // a new log
  std::vector<MeasureRecord> records = load_records(opts_.log_path, &report);
  std::map<std::string, size_t> task_of;
  for (size_t i = 0; i < tasks_.size(); ++i) task_of[tasks_[i].task->key()] = i;
  // Each program once, at its cost by the log's rule (ranked_programs: a
  // program measured again costs the median of its measurements); failed
  // programs cost +inf.
  std::vector<std::map<std::string, double>> cost_of(tasks_.size());
  std::vector<std::string> best_steps(tasks_.size());
  std::vector<double> best_cost(tasks_.size());
  int untimed = 0;
  for (const auto& r : records) {
    auto t = task_of.find(r.task_key());
    if (t == task_of.end()) continue;
    if (!r.untimed()) {
      records_.push_back(r);
      continue;
    }
    // A schedule chosen with nothing timed: measured first, not a trial.
    try {
      leading_[t->second].push_back(State::from_json(tasks_[t->second].task->dag, r.steps));
      ++untimed;
    } catch (const LoomError&) {
      // Steps this build no longer replays: nothing to measure.
    }
  }
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const std::vector<ProgramCost> ranked = ranked_programs(records_, tasks_[i].task->key());
    for (const auto& p : ranked) cost_of[i][p.record->steps.dump()] = p.cost_s;
    if (!ranked.empty()) best_steps[i] = ranked[0].record->steps.dump(), best_cost[i] = ranked[0].cost_s;
  }
  // The programs go back to their policies round by round, as they were
  // measured: a run of one task's records in the log, cut every
  // measures_per_round, is one round (what the task scheduler counts).
  // Training records in the log's order: of each task, and of all.
  std::vector<std::vector<TrainingRecord>> training(tasks_.size());
  std::vector<TrainingRecord> all_training;
  std::vector<std::set<std::string>> seen(tasks_.size());
  std::vector<std::optional<State>> best(tasks_.size());
  std::vector<State> round_states;
  std::vector<double> round_costs;
  int round_task = -1, resumed = 0;
  auto flush_round = [&] {
    if (round_task >= 0 && !round_states.empty()) policies_[round_task]->add_measured(round_states, round_costs);
    round_states.clear();
    round_costs.clear();
  };
  for (const auto& r : records_) {
    const int ti = static_cast<int>(task_of.at(r.task_key()));
    std::string steps = r.steps.dump();
    if (!seen[ti].insert(steps).second) continue;
    State state;
    try {
      state = State::from_json(tasks_[ti].task->dag, r.steps);
    } catch (const LoomError&) {
      policies_[ti]->add_measured_key(steps);
      continue;
    }
    if (ti != round_task || static_cast<int>(round_states.size()) >= round_size(ti)) {
      flush_round();
      round_task = ti;
    }
    if (steps == best_steps[ti]) best[ti] = state;
    auto c = cost_of[ti].find(steps);
    round_costs.push_back(c != cost_of[ti].end() ? c->second : std::numeric_limits<double>::infinity());
    round_states.push_back(state);
    training[ti].push_back({tasks_[ti].task, state, round_costs.back(), r.result.machine});
    all_training.push_back(training[ti].back());
    ++resumed;
  }
  flush_round();
  // The best as the log ranks it (a confirmed program before one measured
  // once), when its steps still replay.
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (best[i]) policies_[i]->set_best(*best[i], best_cost[i]);
  trials_ += resumed;
  if (!own_models_.empty())
    for (size_t i = 0; i < tasks_.size(); ++i) learn_own(i, training[i]);
  if (shared_model_ && shared_model_in_use()) shared_model_->update(all_training);
  opts_.print(fmt("resumed from %s: %d programs of these tasks (%d lines, %d skipped)%s",
                  opts_.log_path.c_str(), resumed, report.lines, report.skipped,
                  untimed ? fmt(", %d untimed schedules to measure first", untimed).c_str() : ""));
}

bool Tuner::shared_model_in_use() const {
  return std::find(has_own_model_.begin(), has_own_model_.end(), false) != has_own_model_.end();
}

void Tuner::learn(size_t ti, const std::vector<TrainingRecord>& records) {
  if (!own_models_.empty()) learn_own(ti, records);
  if (shared_model_ && shared_model_in_use()) shared_model_->update(records);
}

void Tuner::learn_own(size_t ti, const std::vector<TrainingRecord>& records) {
  if (has_own_model_[ti]) {
    own_models_[ti]->update(records);
    return;
  }
  std::vector<TrainingRecord>& waiting = awaiting_own_[ti];
  waiting.insert(waiting.end(), records.begin(), records.end());
  if (waiting.size() < own_model_after_) return;
  // The handover: its own model is fitted on all of its programs at once.
  const std::vector<TrainingRecord> all = std::exchange(waiting, {});
  own_models_[ti]->update(all);
  has_own_model_[ti] = true;
  const std::string& fit = own_models_[ti]->last_fit_summary();
  opts_.print(fmt("%s: its own cost model scores it from now on, fitted on its %zu programs%s",
                  tasks_[ti].task->description().c_str(), all.size(), fit.empty() ? "" : (" (" + fit + ")").c_str()));
}

ScoreFn Tuner::score_fn(int task_index) {
  const Task& task = *tasks_[task_index].task;
  CostModel& model = model_of(static_cast<size_t>(task_index));
  // A pretrained file's programs count with this run's.
  if (model.programs_learned() < static_cast<size_t>(opts_.search.model_warmup_records)) {
    // Too few programs for the model to be worth its time: random scores
    // (and -inf for states that do not lower). A pretrained model ranks
    // from the first round.
    return [this](const std::vector<State>& states) { return random_scores_of_valid(states, rng_); };
  }
  return [&model, &task](const std::vector<State>& states) { return model.predict(task, states); };
}

std::vector<State> Tuner::transferred_programs(int task_index) const {
  const int wanted = opts_.search.transfer_per_round;
  std::vector<State> out;
  if (wanted <= 0) return out;  // (a random search's policy takes none)
  const Task& task = policies_[task_index]->task();
  const std::string target = task.target.to_string();
  // Each task's best `wanted` programs are enough: no more are taken in a
  // round, and those measured here already are passed over.
  for (int rank = 0; rank < wanted; ++rank)
    for (size_t j = 0; j < policies_.size(); ++j) {
      const SearchPolicy& other = *policies_[j];
      if (static_cast<int>(j) == task_index || other.task().target.to_string() != target ||
          rank >= static_cast<int>(other.best_measured().size()))
        continue;
      try {
        out.push_back(State::replay(task.dag, other.best_measured()[rank].second.steps()));
      } catch (const LoomError&) {
        // Not this task's stages or loop extents.
      }
    }
  return out;
}

int Tuner::round_size(int ti) const {
  const int first = opts_.search.first_round_measures;
  return policies_[ti]->rounds() == 0 && first > 0 ? std::min(first, opts_.search.measures_per_round)
                                                  : opts_.search.measures_per_round;
}

const std::vector<State>& Tuner::leading_programs(int ti) {
  std::vector<State>& out = leading_[ti];
  if (leading_gathered_[ti] || !opts_.database) return out;
  leading_gathered_[ti] = true;
  const Task& task = policies_[ti]->task();
  for (State& s : opts_.database->same_task_programs(task)) out.push_back(std::move(s));
  for (State& s : by_score(opts_.database->similar(task), score_fn(ti))) out.push_back(std::move(s));
  return out;
}

void Tuner::one_round(int ti) {
  SearchPolicy& policy = *policies_[ti];
  const Task& task = policy.task();
  int n = std::min(round_size(ti), opts_.search.num_trials - trials_);
  auto t0 = Clock::now();
  std::vector<State> transferred = leading_programs(ti);
  // A first round leads with up to half of the database's programs: the
  // measured best of the same task and the re-fitted programs of similar
  // ones beat what the model finds alone (a model ranks a new task's
  // programs poorly before it has measured any of them).
  const int transfer_limit =
      policy.rounds() == 0 && !transferred.empty()
          ? std::max(opts_.search.transfer_per_round, std::min<int>(transferred.size(), std::max(1, n / 2)))
          : -1;
  for (State& s : transferred_programs(ti)) transferred.push_back(std::move(s));
  std::vector<State> batch = policy.next_batch(n, score_fn(ti), transferred, transfer_limit);
  double search_s = seconds_since(t0);
  if (batch.empty()) {
    // Nothing new to measure: the space may be exhausted.
    policy.add_measured({}, {});
    if (policy.exhausted())  // once: an exhausted task gets no more rounds
      opts_.print(fmt("%s: no new program in %d rounds; its search space is exhausted after %d trials",
                      task.description().c_str(), SearchPolicy::kExhaustedRounds, policy.trials()));
    return;
  }
  auto t1 = Clock::now();
  std::vector<MeasureResult> results = measurer_->measure(task, batch);
  double measure_s = seconds_since(t1);
  std::vector<nlohmann::json> steps;
  for (const auto& s : batch) steps.push_back(s.steps_json());
  if (log_) log_->append(task, steps, results);
  for (size_t i = 0; i < batch.size(); ++i) records_.push_back({task, steps[i], results[i]});
  std::vector<double> costs;
  std::vector<TrainingRecord> training;
  int errors = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    double c = results[i].ok() ? results[i].median_s() : std::numeric_limits<double>::infinity();
    if (!results[i].ok()) ++errors;
    costs.push_back(c);
    training.push_back({policy.task_ptr(), batch[i], c, results[i].machine});
  }
  policy.add_measured(batch, costs);
  trials_ += static_cast<int>(batch.size());
  auto t2 = Clock::now();
  learn(static_cast<size_t>(ti), training);
  double train_s = seconds_since(t2);
  ++round_;
  double best = policy.best_cost();
  // The ETA extrapolates the time per trial of this run's rounds after its
  // first: the first scores at random and fits a new model, so its pace is
  // not the others'. Until a second round has run there is no estimate.
  std::string eta;
  const int trials_left = opts_.search.num_trials - trials_;
  if (first_round_trials_ < 0) {
    first_round_end_ = Clock::now();
    first_round_trials_ = trials_;
  } else if (trials_left > 0) {
    const double left_s = seconds_since(first_round_end_) / (trials_ - first_round_trials_) * trials_left;
    eta = fmt(left_s < 10 ? " | ETA %.1f s" : " | ETA %.0f s", left_s);
  }
  opts_.print(fmt("round %d: %s | %zu measured, %d errors | best %.2f GFLOP/s (%.4f ms) | trials %d/%d | "
                  "search %.1f s (sample %.1f s, %d scored), measure %.1f s, train %.1f s%s",
                  round_, task.description().c_str(), batch.size(), errors,
                  std::isfinite(best) ? task.dag->flop_count() / best / 1e9 : 0.0,
                  std::isfinite(best) ? best * 1e3 : 0.0, trials_, opts_.search.num_trials, search_s,
                  policy.last_sample_seconds(), policy.last_evolution().scored, measure_s, train_s,
                  eta.c_str()));
}

void Tuner::run() {
  auto t0 = Clock::now();
  double before = elapsed_s_;
  const int trials_before = trials_;
  bool budget_spent = false;
  while (trials_ < opts_.search.num_trials && !stop_requested() && !budget_spent) {
    std::vector<TaskProgress> progress;
    for (size_t i = 0; i < policies_.size(); ++i) {
      const SearchPolicy& p = *policies_[i];
      TaskProgress tp;
      tp.group = tasks_[i].task->similarity_group();
      tp.weight = tasks_[i].weight;
      tp.flops = p.task().dag->flop_count();
      tp.best_cost = p.best_cost();
      tp.trials = p.trials();
      tp.best_history = p.best_history();
      tp.finished = (opts_.search.early_stopping > 0 &&
                     p.rounds_without_improvement() >= opts_.search.early_stopping) ||
                    p.exhausted();
      progress.push_back(tp);
    }
    // The task scheduler's and the warm-up scores' stream, as the policies'.
    rng_.seed(round_seed(opts_.search.seed * 0xbf58476d1ce4e5b9ULL, trials_));
    int ti = scheduler_.next(progress, rng_);
    if (ti < 0) {
      opts_.print("every task stopped early (no improvement, or nothing new to measure)");
      break;
    }
    one_round(ti);
    elapsed_s_ = before + seconds_since(t0);
    // At least one round runs, so that a budget shorter than a round still
    // measures something.
    if (opts_.search.time_budget_s > 0 && seconds_since(t0) >= opts_.search.time_budget_s) {
      opts_.print(fmt("time budget of %g s spent after round %d: %d of %d trials", opts_.search.time_budget_s,
                      round_, trials_, opts_.search.num_trials));
      budget_spent = true;
    }
    // Several tasks (a network's): where the budget went and the estimated
    // end-to-end latency, the objective the task scheduler minimizes.
    if (policies_.size() > 1) {
      std::string table = summary_table();
      opts_.print(table.substr(0, table.size() - 1));
    }
  }
  if (stop_requested()) opts_.print("interrupted: stopped after the current batch; the log is complete");
  // New programs: their top ones are confirmed. None (a log resumed whose
  // budget is spent): only what a stopped confirmation left undone.
  else confirm(/*only_unfinished=*/trials_ == trials_before);
  elapsed_s_ = before + seconds_since(t0);
}

// Tuning keeps each task's fastest single measurement; on a shared machine
// that one is partly luck (docs/results/2026-11-30-confirmation.md). So the
// top programs are measured again, round by
// round (every round measures all of them, so load from other processes
// falls on all alike), and the best is chosen among them on the median of
// all measurements of each — by ranked_programs(), the rule `loom report`
// and `loom export` apply to the log, where these records are appended.
void Tuner::confirm(bool only_unfinished) {
  const int top = opts_.search.confirm_top, rounds = opts_.search.confirm_rounds;
  if (top <= 0 || rounds <= 0) return;
  for (size_t ti = 0; ti < policies_.size() && !stop_requested(); ++ti) {
    SearchPolicy& policy = *policies_[ti];
    const Task& task = policy.task();
    // The search's best by their first measurement, from the log's records:
    // a resumed run's policies rank confirmed programs by their medians,
    // which would put unconfirmed ones first and confirm again.
    auto candidates = top_by_first_measurement(task, top);
    if (candidates.size() < 2) continue;
    auto t0 = Clock::now();
    std::vector<State> states;
    std::vector<nlohmann::json> steps;
    for (const auto& [cost, state] : candidates) {
      states.push_back(state);
      steps.push_back(state.steps_json());
    }
    // Rounds the log already holds (a run stopped while confirming): the
    // fewest measurements of a candidate, less its first.
    int done = 0;
    if (only_unfinished) {
      std::map<std::string, int> measurements;
      for (const auto& r : records_)
        if (r.task_key() == task.key()) ++measurements[r.steps.dump()];
      done = rounds;
      for (const auto& st : steps) done = std::min(done, measurements[st.dump()] - 1);
      if (done >= rounds) continue;
    }
    for (int r = done; r < rounds && !stop_requested(); ++r) {
      std::vector<MeasureResult> results = measurer_->measure(task, states);
      if (log_) log_->append(task, steps, results);
      for (size_t k = 0; k < results.size(); ++k) records_.push_back({task, steps[k], results[k]});
    }
    ProgramCost best = best_program(records_, task.key());
    if (!best.record) continue;
    size_t rank = 0;
    while (rank < steps.size() && steps[rank] != best.record->steps) ++rank;
    policy.set_best(State::from_json(task.dag, best.record->steps), best.cost_s);
    const double flops = task.dag->flop_count();
    const std::string which = rank < steps.size() ? fmt("#%zu in tuning", rank + 1) : "not among them";
    opts_.print(fmt("confirm: %s | top %zu measured %d more times (%.1f s) | best %.2f GFLOP/s, the median of "
                    "%d measurements (%s; the first in tuning measured %.2f GFLOP/s once)",
                    task.description().c_str(), candidates.size(), rounds, seconds_since(t0), flops / best.cost_s / 1e9,
                    best.measurements, which.c_str(), flops / candidates[0].first / 1e9));
  }
}

std::vector<std::pair<double, State>> Tuner::top_by_first_measurement(const Task& task, int n) const {
  std::vector<std::pair<double, const MeasureRecord*>> first;
  std::set<std::string> seen;
  for (const auto& r : records_)
    if (r.task_key() == task.key() && seen.insert(r.steps.dump()).second && r.result.ok())
      first.emplace_back(r.result.median_s(), &r);
  std::stable_sort(first.begin(), first.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<double, State>> out;
  for (const auto& [cost, record] : first) {
    if (static_cast<int>(out.size()) >= n) break;
    try {
      out.emplace_back(cost, State::from_json(task.dag, record->steps));
    } catch (const LoomError&) {
      // steps of another version that no longer replay: never a candidate
    }
  }
  return out;
}

std::vector<TaskSummary> Tuner::summary() const {
  std::vector<TaskSummary> out;
  for (size_t i = 0; i < policies_.size(); ++i) {
    const SearchPolicy& p = *policies_[i];
    TaskSummary s;
    s.description = p.task().description();
    s.weight = tasks_[i].weight;
    s.flops = p.task().dag->flop_count();
    s.best_cost = p.best_cost();
    s.trials = p.trials();
    if (p.best_state().defined()) s.best_steps = p.best_state().steps_json();
    out.push_back(s);
  }
  return out;
}

std::string Tuner::summary_table() const {
  std::ostringstream os;
  // The task's name comes last, whole: a network's subgraph tasks differ
  // only in the input shapes at the end of theirs.
  os << fmt("%8s %10s %12s %10s %7s  %s\n", "weight", "GFLOP", "best ms", "GFLOP/s", "trials", "task");
  double total = 0;
  size_t measured = 0;
  for (const auto& s : summary()) {
    bool ok = std::isfinite(s.best_cost) && s.best_cost > 0;
    if (ok)
      os << fmt("%8.2f %10.3f %12.4f %10.2f %7d  %s\n", s.weight, s.flops / 1e9, s.best_cost * 1e3,
                s.flops / s.best_cost / 1e9, s.trials, s.description.c_str());
    else
      os << fmt("%8.2f %10.3f %12s %10s %7d  %s\n", s.weight, s.flops / 1e9, "-", "-", s.trials,
                s.description.c_str());
    if (ok) total += s.weight * s.best_cost;
    measured += ok ? 1 : 0;
  }
  const std::string unmeasured =
      measured < policies_.size() ? fmt(" (%zu of %zu tasks not measured yet)", policies_.size() - measured, policies_.size()) : "";
  os << fmt("weighted total latency: %.4f ms%s; %d trials in %.1f s\n", total * 1e3, unmeasured.c_str(), trials_,
            elapsed_s_);
  return os.str();
}

}  // namespace loom
