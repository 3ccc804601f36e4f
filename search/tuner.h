// The tuning loop over one or many tasks: pick a task (task scheduler), let
// its search policy propose a batch under the cost model, measure it, append
// it to the log, retrain the model on the new records, report progress.
// One cost model serves every task (Ansor's choice: each round trains it on
// all tasks' programs), or each task has its own copy of the starting model
// that learns from that task's programs only (see the constructor).
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
  bool resume = true;    // continue from the log's records of these tasks
  std::function<void(const std::string&)> print;  // progress lines (default: stdout)
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
  ScoreFn score_fn(int task_index);
  size_t model_index(size_t task_index) const { return models_.size() == 1 ? 0 : task_index; }
  CostModel& model_of(size_t task_index) { return *models_[model_index(task_index)]; }

  std::vector<TuneTask> tasks_;
  TunerOptions opts_;
  std::vector<std::unique_ptr<CostModel>> models_;  // one (shared) or one per task
  std::shared_ptr<CandidateMeasurer> measurer_;
  std::unique_ptr<RecordLog> log_;
  std::vector<std::unique_ptr<SearchPolicy>> policies_;
  TaskScheduler scheduler_;
  std::mt19937_64 rng_;
  // Every record of these tasks, resumed and new (what the log holds): the
  // best after confirm() is chosen by ranked_programs(), as `loom report`
  // and `loom export` choose it from the log.
  std::vector<MeasureRecord> records_;
  int trials_ = 0, round_ = 0;
  double elapsed_s_ = 0;
  // When this run's first round ended and the trials done then (-1: not
  // yet), for the ETA.
  std::chrono::steady_clock::time_point first_round_end_;
  int first_round_trials_ = -1;
};

}  // namespace loom
