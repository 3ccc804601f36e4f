// The tuning loop end to end on a tiny task with real worker processes.
#include <gtest/gtest.h>

#include <filesystem>

#include "measure/records.h"
#include "search/tuner.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

std::string temp_log(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("loom_test_" + std::to_string(getpid()) + "_" + name);
  std::filesystem::remove(p);
  return p.string();
}

TunerOptions tiny_options(const std::string& log, int trials) {
  TunerOptions o;
  o.search.num_trials = trials;
  o.search.measures_per_round = 8;
  o.search.population = 32;
  o.search.generations = 2;
  o.search.seed = 123;
  o.search.init_measured_ratio = 0;  // the population does not depend on measured times
  o.measure.repeat = 1;
  o.measure.min_repeat_ms = 1;
  o.log_path = log;
  o.print = [](const std::string&) {};
  return o;
}

std::vector<TuneTask> tiny_tasks() {
  auto task = std::make_shared<const Task>(
      Task::make("matmul", nlohmann::json{{"M", 32}, {"N", 32}, {"K", 32}}, Target::parse("cpu -threads=1")));
  return {{task, 1.0}};
}

std::vector<std::string> logged_steps(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& r : load_records(path)) out.push_back(r.steps.dump());
  return out;
}

TEST(Tuner, SameSeedAndRandomModelGiveIdenticalLogs) {
  std::string a = temp_log("det_a.jsonl"), b = temp_log("det_b.jsonl");
  Tuner(tiny_tasks(), tiny_options(a, 24), make_cost_model("random")).run();
  Tuner(tiny_tasks(), tiny_options(b, 24), make_cost_model("random")).run();
  auto la = logged_steps(a), lb = logged_steps(b);
  EXPECT_EQ(la.size(), 24u);
  EXPECT_EQ(la, lb);
}

TEST(Tuner, ResumeDoesNotMeasureAgain) {
  std::string log = temp_log("resume.jsonl");
  Tuner(tiny_tasks(), tiny_options(log, 16), make_cost_model("random")).run();
  ASSERT_EQ(load_records(log).size(), 16u);
  // A second run with a larger budget continues from the log.
  Tuner t(tiny_tasks(), tiny_options(log, 32), make_cost_model("random"));
  t.run();
  auto steps = logged_steps(log);
  EXPECT_EQ(steps.size(), 32u);  // 16 old + 16 new, not 16 + 32
  std::set<std::string> distinct(steps.begin(), steps.end());
  EXPECT_EQ(distinct.size(), steps.size());
}

TEST(Tuner, FindsACorrectProgramAndReportsIt) {
  std::string log = temp_log("best.jsonl");
  Tuner t(tiny_tasks(), tiny_options(log, 16), make_cost_model("random"));
  t.run();
  auto summary = t.summary();
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_TRUE(std::isfinite(summary[0].best_cost));
  State best = State::from_json(tiny_tasks()[0].task->dag, summary[0].best_steps);
  EXPECT_EQ(testing::check_with_c_backend(best), "");
  EXPECT_NE(t.summary_table().find("matmul"), std::string::npos);
}

}  // namespace
}  // namespace loom
