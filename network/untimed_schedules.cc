#include "network/untimed_schedules.h"

#include <chrono>
#include <filesystem>
#include <iterator>
#include <optional>

#include "costmodel/cost_model.h"
#include "measure/records.h"
#include "measure/task.h"
#include "measure/timing.h"
#include "search/predicted_schedule.h"
#include "search/schedule_transfer.h"

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
    if (own_programs.same_task(task)) continue;  // the executor runs the log's best
    std::optional<State> chosen = database_programs.same_task(task);
    if (chosen) {
      ++out.same_task;
    } else if ((chosen = best_scored(task, *model, every_program.similar(task)))) {
      ++out.refitted;
    } else {
      PredictedSchedule p = predict_schedule(task, *model, options.search);
      chosen = p.state;
      out.scored += p.scored;
      ++out.predicted;
    }
    out.schedules[t.subgraph.dump()] = chosen->steps_json();
  }
  out.seconds = seconds_since(t0);
  return out;
}

}  // namespace loom::graph
