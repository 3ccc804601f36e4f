#include "search/untimed_schedule.h"

#include <optional>

#include "search/predicted_schedule.h"

namespace loom {

UntimedSchedule untimed_schedule(const Task& task, CostModel& model, const ScheduleLibrary& database,
                                 const ScheduleLibrary& sources, const SearchSettings& settings) {
  UntimedSchedule out;
  if (std::optional<State> same = database.same_task(task)) {
    out.state = *same;
    out.origin = UntimedOrigin::kSameTask;
  } else if (std::optional<State> refitted = best_scored(task, model, sources.similar(task))) {
    out.state = *refitted;
    out.origin = UntimedOrigin::kRefitted;
  } else {
    PredictedSchedule p = predict_schedule(task, model, settings);
    out.state = p.state;
    out.scored = p.scored;
  }
  return out;
}

std::vector<std::optional<UntimedSchedule>> untimed_schedules(const std::vector<Task>& tasks, CostModel& model,
                                                              const std::vector<MeasureRecord>& database,
                                                              const std::vector<MeasureRecord>& log,
                                                              const SearchSettings& settings) {
  const ScheduleLibrary database_programs(database);
  std::vector<MeasureRecord> sources = database;
  sources.insert(sources.end(), log.begin(), log.end());
  const ScheduleLibrary source_programs(sources);
  std::vector<std::optional<UntimedSchedule>> out;
  for (const Task& task : tasks) {
    const std::string key = task.key();
    if (best_program(log, key).record || latest_untimed(log, key)) out.emplace_back();
    else out.push_back(untimed_schedule(task, model, database_programs, source_programs, settings));
  }
  return out;
}

const char* untimed_origin_name(UntimedOrigin origin) {
  switch (origin) {
    case UntimedOrigin::kSameTask: return "the database";
    case UntimedOrigin::kRefitted: return "re-fitted";
    case UntimedOrigin::kPredicted: return "predicted";
  }
  return "?";
}

}  // namespace loom
