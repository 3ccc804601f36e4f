// Zero-measurement schedules: the program a cost model prefers after a
// search scored by it alone, nothing timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "costmodel/cost_model.h"
#include "ir/lower.h"
#include "measure/task.h"
#include "search/predicted_schedule.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"

namespace loom {
namespace {

std::string shipped_model() {
  const char* src = std::getenv("LOOM_SOURCE_DIR");
  const std::filesystem::path root =
      src ? std::filesystem::path(src) : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  return (root / "experiments" / "models" / "suite_mlp.model").string();
}

// The shipped model's pick for a 128³ matmul replays from its steps,
// lowers, and scores above the median of the task's random programs (the
// evolution under the model moves past what sampling alone gives).
TEST(PredictedSchedule, TheModelsPickIsAValidProgramItScoresAboveTypicalSamples) {
  std::unique_ptr<CostModel> model = load_cost_model(shipped_model());
  Task task = Task::make("matmul", {{"M", 128}, {"N", 128}, {"K", 128}}, Target{});
  SearchSettings settings;
  settings.seed = 7;
  settings.population = 256;
  settings.generations = 2;
  PredictedSchedule p = predict_schedule(task, *model, settings);
  EXPECT_GT(p.scored, 0);
  State replayed = State::replay(task.dag, p.state.steps());
  EXPECT_NO_THROW(lower(replayed));
  std::mt19937_64 rng(3);
  std::vector<float> sampled = model->predict(task, sample(make_sketch_task(task), 64, rng));
  ASSERT_FALSE(sampled.empty());
  std::nth_element(sampled.begin(), sampled.begin() + sampled.size() / 2, sampled.end());
  EXPECT_GE(p.score, sampled[sampled.size() / 2]);
}

TEST(PredictedSchedule, TheSameSeedPicksTheSameProgram) {
  std::unique_ptr<CostModel> model = load_cost_model(shipped_model());
  Task task = Task::make("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, Target{});
  SearchSettings settings;
  settings.seed = 11;
  settings.population = 128;
  settings.generations = 1;
  EXPECT_EQ(predict_schedule(task, *model, settings).state.steps_json(),
            predict_schedule(task, *model, settings).state.steps_json());
}

}  // namespace
}  // namespace loom
