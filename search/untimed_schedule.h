// A task's schedule chosen with nothing timed: the schedule database's best
// program for the same task as it is; else the best programs of its nearest
// similar tasks there (and in the run's own log), re-fitted to its extents
// and ranked by the cost model; else the program the model prefers from its
// own search (predicted_schedule.h). What a network runs before any of its
// programs is timed, and what `loom tune --trials 0` writes to a log as an
// untimed record.
#pragma once

#include <optional>
#include <vector>

#include "costmodel/cost_model.h"
#include "measure/task.h"
#include "search/schedule_transfer.h"
#include "search/search_settings.h"

namespace loom {

enum class UntimedOrigin { kSameTask, kRefitted, kPredicted };

struct UntimedSchedule {
  State state;
  UntimedOrigin origin = UntimedOrigin::kPredicted;
  int scored = 0;  // programs the model scored in its own search (kPredicted)
};

// `database`: programs measured on this machine kind, the same task's taken
// as they are; `sources`: programs whose similar tasks' ones are re-fitted
// (the database and the run's own log). Throws LoomError when the task has
// no valid program.
UntimedSchedule untimed_schedule(const Task& task, CostModel& model, const ScheduleLibrary& database,
                                 const ScheduleLibrary& sources, const SearchSettings& settings);

// Every task's untimed schedule, in the tasks' order; nullopt for a task
// `log` has a valid or an untimed record of (what runs is the log's).
// `database`: records of this machine kind; similar tasks' programs come
// from it and from `log`. What `loom network run` and `loom tune --trials
// 0` choose.
std::vector<std::optional<UntimedSchedule>> untimed_schedules(const std::vector<Task>& tasks, CostModel& model,
                                                              const std::vector<MeasureRecord>& database,
                                                              const std::vector<MeasureRecord>& log,
                                                              const SearchSettings& settings);

// "the database", "re-fitted", "predicted".
const char* untimed_origin_name(UntimedOrigin origin);

}  // namespace loom
