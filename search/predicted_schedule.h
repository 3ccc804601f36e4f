// A schedule chosen by a cost model alone, no program timed: the task's
// sketches, random annotation and the evolutionary search scored by the
// model, as a tuning round would propose them, and the best-scored program
// taken. What a network runs before any measurement (the zero-measurement
// schedules of TenSet's pretrained models), far better than the default
// schedule where the model ranks programs well.
#pragma once

#include <cstdint>

#include "costmodel/cost_model.h"
#include "measure/task.h"
#include "search/search_settings.h"
#include "ir/state.h"

namespace loom {

struct PredictedSchedule {
  State state;          // the best-scored program
  float score = 0;      // the model's score of it (higher: faster)
  int scored = 0;       // programs the model scored for it
  double seconds = 0;   // sampling, evolution and scoring
};

// `settings`: the search's (population, generations, seed); a smaller
// population than tuning's default keeps a whole network's prediction in
// seconds. Throws LoomError when the task has no valid program.
PredictedSchedule predict_schedule(const Task& task, CostModel& model, const SearchSettings& settings);

}  // namespace loom
