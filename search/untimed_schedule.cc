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

const char* untimed_origin_name(UntimedOrigin origin) {
  switch (origin) {
    case UntimedOrigin::kSameTask: return "the database";
    case UntimedOrigin::kRefitted: return "re-fitted";
    case UntimedOrigin::kPredicted: return "predicted";
  }
  return "?";
}

}  // namespace loom
