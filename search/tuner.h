// The tuning loop over one or many tasks: pick a task (task scheduler), let
// its search policy propose a batch under the cost model, measure it, append
// it to the log, retrain the model on the new records, report progress.
// One cost model serves every task (Ansor's choice: each round trains it on
// all tasks' programs), or each task has its own copy of the starting model
// that learns from that task's programs only, from the start or once the task
// has measured enough programs for it (TunerModels).
// Resumes from an existing log; stops at the trial budget, when every task
// early-stopped, or after the current batch when interrupted (SIGINT). At
// the end (unless interrupted) the best programs of each task are measured
// again and the best is chosen on all its measurements (confirm()).
// A run killed at any moment and resumed goes on as the uninterrupted one:
// the log is appended a batch at a time (one write), the resumed policies get
// their programs back round by round, each round's randomness follows from
// the seed and the trials before it, and a stopped confirmation is finished.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "measure/measurer.h"
#include "measure/records.h"
#include "search/schedule_transfer.h"
#include "search/search_policy.h"
#include "search/task_scheduler.h"

namespace loom {

struct TuneTask {
  std::shared_ptr<const Task> task;
  double weight = 1;
};

struct TunerOptions {
  SearchSettings search;
  MeasureOptions measure;
  SketchSettings sketch;
  // Where candidates are measured: null = this process's worker pool
  // (Measurer with `measure`); a distributed job passes its coordinator.
  std::shared_ptr<CandidateMeasurer> measurer;
  std::string log_path;  // "" = no log
  // Tuned records of earlier runs (the schedule database, measured on this
  // machine kind): each round of a task measures first its programs there,
  // then its similar tasks' re-fitted and ranked by the model (its first
  // round up to half of them, later rounds up to search.transfer_per_round,
  // with the run's other tasks' best). Null: none.
  std::shared_ptr<const ScheduleLibrary> database;
  bool resume = true;    // continue from the log's records of these tasks
  std::function<void(const std::string&)> print;  // progress lines (default: stdout)
};

// The cost models of a run. `shared` scores the states of every task that has
// no model of its own yet, and learns from every program while some task
// still uses it. `per_task` is empty or holds one model per task, in the
// tasks' order: a task's own model learns from that task's programs only and
// takes over once the task has measured `per_task_after` programs (fitted on
// all of them then; 0: from the start, and `shared` may be null).
struct TunerModels {
  std::unique_ptr<CostModel> shared;
  std::vector<std::unique_ptr<CostModel>> per_task;
  int per_task_after = 0;
};

struct TaskSummary {
  std::string description;
  double weight = 1, flops = 0, best_cost = 0;
  int trials = 0;
  nlohmann::json best_steps;
};

class Tuner {
 public:
  // One model, shared by every task.
  Tuner(std::vector<TuneTask> tasks, TunerOptions options, std::unique_ptr<CostModel> model);
  // One model (shared) or one per task, in the tasks' order: a task's model
  // then trains on that task's programs only and scores only its states.
  Tuner(std::vector<TuneTask> tasks, TunerOptions options, std::vector<std::unique_ptr<CostModel>> models);
  Tuner(std::vector<TuneTask> tasks, TunerOptions options, TunerModels models);
  ~Tuner();

  // Runs until the budget is spent, every task stopped, or stop requested.
  void run();
  std::vector<TaskSummary> summary() const;
  std::string summary_table() const;
  int trials() const { return trials_; }

  // Async-signal-safe: ends tuning after the current batch.
  static void request_stop();
  static bool stop_requested();

 private:
  void resume_from_log();
  void one_round(int task_index);
  // only_unfinished: the rounds a stopped confirmation left, for the
  // candidates it was measuring (a log resumed with its budget spent).
  void confirm(bool only_unfinished);
  // A task's n best programs by their first measurement in records_ (what
  // the search ranked them by), best first: the confirmation's candidates.
  std::vector<std::pair<double, State>> top_by_first_measurement(const Task& task, int n) const;
  ScoreFn score_fn(int task_index);
  // The other tasks' best measured programs replayed on this task (those
  // that replay), best ranks first, tasks in turn within a rank.
  std::vector<State> transferred_programs(int task_index) const;
  // The log's untimed schedules of this task, the database's programs for
  // it, then its similar tasks' re-fitted, best scored first: gathered at
  // the task's first round and kept (those measured since are passed over).
  const std::vector<State>& leading_programs(int task_index);
  // Programs the task's next round measures: search.first_round_measures in
  // its first (when set), search.measures_per_round after.
  int round_size(int task_index) const;
  // The model that scores a task's states now.
  CostModel& model_of(size_t task_index) { return has_own_model_[task_index] ? *own_models_[task_index] : *shared_model_; }
  bool shared_model_in_use() const;
  // Trains on a task's newly measured programs the models that learn from
  // them (learn_own: its own model, or keeps them for it and hands it over
  // once the task has measured enough).
  void learn(size_t task_index, const std::vector<TrainingRecord>& records);
  void learn_own(size_t task_index, const std::vector<TrainingRecord>& records);

  std::vector<TuneTask> tasks_;
  TunerOptions opts_;
  std::unique_ptr<CostModel> shared_model_;               // null when every task has its own
  std::vector<std::unique_ptr<CostModel>> own_models_;    // empty, or one per task
  size_t own_model_after_ = 0;
  std::vector<bool> has_own_model_;                       // per task: its own model scores it
  std::vector<std::vector<TrainingRecord>> awaiting_own_;  // per task: its programs until then
  std::shared_ptr<CandidateMeasurer> measurer_;
  std::unique_ptr<RecordLog> log_;
  std::vector<std::unique_ptr<SearchPolicy>> policies_;
  TaskScheduler scheduler_;
  std::mt19937_64 rng_;
  // Every record of these tasks, resumed and new (what the log holds): the
  // best after confirm() is chosen by ranked_programs(), as `loom report`
  // and `loom export` choose it from the log.
  std::vector<MeasureRecord> records_;
  // Per task: the log's untimed records (schedules chosen with nothing
  // timed), then from the task's first round all leading_programs().
  std::vector<std::vector<State>> leading_;
  std::vector<bool> leading_gathered_;
  int trials_ = 0, round_ = 0;
  double elapsed_s_ = 0;
  // When this run's first round ended and the trials done then (-1: not
  // yet), for the ETA.
  std::chrono::steady_clock::time_point first_round_end_;
  int first_round_trials_ = -1;
};

}  // namespace loom
