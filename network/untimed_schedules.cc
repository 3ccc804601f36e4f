#include "network/untimed_schedules.h"

#include <chrono>
#include <filesystem>
#include <iterator>

#include "costmodel/cost_model.h"
#include "measure/records.h"
#include "measure/task.h"
#include "measure/timing.h"
#include "search/untimed_schedule.h"

namespace loom::graph {

UntimedSchedules choose_untimed_schedules(const NetworkTasks& tasks, const UntimedScheduleOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  UntimedSchedules out;
  std::unique_ptr<CostModel> model = load_cost_model(options.cost_model);
  std::vector<MeasureRecord> database = this_machines_records(options.databases, &out.notes), own;
  if (!options.log.empty() && std::filesystem::exists(options.log)) own = load_records(options.log, nullptr, false);
  const ScheduleLibrary database_programs(database), own_programs(own);
  std::vector<MeasureRecord> all = database;
  all.insert(all.end(), own.begin(), own.end());
  const ScheduleLibrary every_program(all);

  Target target;
  target.threads = options.threads;
  for (const auto& t : tasks.tasks) {
    Task task = Task::make(t.workload(), t.subgraph, target);
    // The executor runs the log's best, or its untimed record.
    if (own_programs.same_task(task) || latest_untimed(own, task.key())) continue;
    UntimedSchedule u = untimed_schedule(task, *model, database_programs, every_program, options.search);
    out.same_task += u.origin == UntimedOrigin::kSameTask;
    out.refitted += u.origin == UntimedOrigin::kRefitted;
    out.predicted += u.origin == UntimedOrigin::kPredicted;
    out.scored += u.scored;
    out.schedules[t.subgraph.dump()] = u.state.steps_json();
  }
  out.seconds = seconds_since(t0);
  return out;
}

}  // namespace loom::graph
