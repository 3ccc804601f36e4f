#include "network/untimed_schedules.h"

#include <chrono>
#include <filesystem>

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
  const std::vector<MeasureRecord> database = this_machines_records(options.databases, &out.notes);
  std::vector<MeasureRecord> log;
  if (!options.log.empty() && std::filesystem::exists(options.log)) log = load_records(options.log, nullptr, false);
  Target target;
  target.threads = options.threads;
  std::vector<Task> task_list;
  for (const auto& t : tasks.tasks) task_list.push_back(Task::make(t.workload(), t.subgraph, target));
  const auto chosen = untimed_schedules(task_list, *model, database, log, options.search);
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i]) continue;  // the executor runs the log's best, or its untimed record
    out.same_task += chosen[i]->origin == UntimedOrigin::kSameTask;
    out.refitted += chosen[i]->origin == UntimedOrigin::kRefitted;
    out.predicted += chosen[i]->origin == UntimedOrigin::kPredicted;
    out.scored += chosen[i]->scored;
    out.schedules[tasks.tasks[i].subgraph.dump()] = chosen[i]->state.steps_json();
  }
  out.seconds = seconds_since(t0);
  return out;
}

}  // namespace loom::graph
