// A schedule for every task of a network before any of its programs is
// timed: the same task's best program in a schedule database (tuned records
// of other networks, measured on this machine kind) as it is; else the
// programs of the nearest similar tasks there, re-fitted to this task's
// extents and ranked by the cost model; else the program the cost model
// prefers from its own search (search/predicted_schedule.h). Tasks the run's
// own log has measured keep the executor's choice (its best record).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/tasks.h"
#include "search/search_settings.h"

namespace loom::graph {

struct UntimedScheduleOptions {
  std::string cost_model;              // a saved model file
  std::vector<std::string> databases;  // records logs offered to every task
  std::string log;                     // the run's log: its tasks are left out; its programs serve similar tasks
  int threads = 1;
  // The model's own search where no database program serves (population,
  // generations, seed: search/predicted_schedule.h).
  SearchSettings search = default_search();
  static SearchSettings default_search() {
    SearchSettings s;
    s.seed = 1;
    return s;
  }
};

struct UntimedSchedules {
  // Steps by the task's subgraph JSON (NetworkTask::subgraph.dump()): what
  // ExecutorOptions::schedules takes.
  std::map<std::string, nlohmann::json> schedules;
  int same_task = 0, refitted = 0, predicted = 0;
  int scored = 0;  // programs the model scored for the predicted ones
  double seconds = 0;
  // One line per database record set left out: records measured on another
  // machine kind than this one.
  std::vector<std::string> notes;
};

// Throws LoomError for an unreadable model or log, or a task without a
// valid program.
UntimedSchedules choose_untimed_schedules(const NetworkTasks& tasks, const UntimedScheduleOptions& options);

}  // namespace loom::graph
