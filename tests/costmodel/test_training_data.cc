// Training data from record logs: repeats of a program (the same steps, or
// steps that lower to the same loop nest) are pooled into one program, and
// the models' validation share is stable as records arrive.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "costmodel/metrics.h"
#include "costmodel/training_data.h"
#include "measure/records.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

std::string temp_log(const std::string& name) {
  auto p = loom::testing::scratch_dir() / ("loom_test_training_" + name + "_" +
                                                      std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(p);
  return p.string();
}

MeasureRecord record(const Task& task, const nlohmann::json& steps, std::vector<double> costs) {
  MeasureRecord r;
  r.task = task;
  r.steps = steps;
  r.result.costs_s = std::move(costs);
  if (r.result.costs_s.empty()) r.result.error = ErrorKind::kRunError, r.result.error_msg = "crash";
  return r;
}

TEST(TrainingData, RepeatsOfAProgramAcrossLogsArePooledIntoOneProgram) {
  Task task = Task::make("matmul", {{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=1"));
  const nlohmann::json plain = nlohmann::json::array();
  const nlohmann::json split = nlohmann::json::parse(R"([["SP", 2, 0, 8, [2], 1]])");
  std::string a = temp_log("a"), b = temp_log("b");
  {
    RecordLog log(a);
    log.append({record(task, plain, {1.0, 2.0, 3.0}), record(task, split, {})});
  }
  {
    RecordLog log(b);
    log.append({record(task, plain, {10.0, 11.0, 12.0}), record(task, split, {5.0})});
  }
  RecordLoadStats st;
  auto programs = read_training_records({a, b}, &st);
  ASSERT_EQ(programs.size(), 2u);
  EXPECT_EQ(st.records, 4u);
  EXPECT_EQ(st.merged, 2u);
  EXPECT_EQ(st.failed, 0u) << "the split program has one valid measurement";
  // Median of {1, 2, 3, 10, 11, 12}; the minimum with CostStatistic::kMin.
  EXPECT_DOUBLE_EQ(programs[0].cost_s, 6.5);
  EXPECT_DOUBLE_EQ(programs[1].cost_s, 5.0);
  EXPECT_DOUBLE_EQ(read_training_records({a, b}, nullptr, CostStatistic::kMin)[0].cost_s, 1.0);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST(TrainingData, StepsThatLowerToTheSameLoopNestAreOneProgram) {
  Task task = Task::make("matmul", {{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=1"));
  // An auto-unroll step of 0 unrolls nothing: the same loop nest as no step.
  const nlohmann::json plain = nlohmann::json::array();
  const nlohmann::json no_unroll = nlohmann::json::parse(R"([["PR", 2, 0, "auto_unroll_max_step$0"]])");
  const nlohmann::json unroll = nlohmann::json::parse(R"([["PR", 2, 0, "auto_unroll_max_step$16"]])");
  std::string a = temp_log("same_code");
  {
    RecordLog log(a);
    log.append({record(task, plain, {1.0, 2.0}), record(task, no_unroll, {3.0}), record(task, unroll, {9.0})});
  }
  RecordLoadStats st;
  auto programs = read_training_records({a}, &st);
  ASSERT_EQ(programs.size(), 2u) << "the auto-unroll step of 16 is another program";
  EXPECT_EQ(st.merged, 1u);
  EXPECT_EQ(st.same_code, 1u);
  EXPECT_DOUBLE_EQ(programs[0].cost_s, 2.0) << "median of the pooled timings {1, 2, 3}";
  EXPECT_DOUBLE_EQ(programs[1].cost_s, 9.0);
  EXPECT_NE(program_key(programs[0]), program_key(programs[1]));
  std::filesystem::remove(a);
}

TEST(TrainingData, AProgramTimedOnTwoKindsOfMachineIsTwoProgramsInTwoRankingGroups) {
  Task task = Task::make("matmul", {{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=1"));
  const nlohmann::json plain = nlohmann::json::array();
  MeasureRecord here = record(task, plain, {1.0}), there = record(task, plain, {4.0});
  here.result.machine = {"CPU A", "avx512", 2, ""};
  there.result.machine = {"CPU B", "avx2", 2, ""};
  std::string a = temp_log("machines");
  {
    RecordLog log(a);
    log.append({here, there});
  }
  RecordLoadStats st;
  auto programs = read_training_records({a}, &st);
  ASSERT_EQ(programs.size(), 2u) << "timings of different machines are not pooled";
  EXPECT_EQ(st.merged, 0u);
  EXPECT_EQ(programs[0].machine, here.result.machine);
  EXPECT_EQ(programs[1].machine, there.result.machine);
  FeatureDataset d = make_feature_dataset(programs);
  EXPECT_NE(d.groups[0], d.groups[1]);
  EXPECT_EQ(d.normalized_throughput(), (std::vector<float>{1.0f, 1.0f})) << "each the best of its own group";
  std::filesystem::remove(a);
}

TEST(TrainingData, AProgramKeepsItsValidationSideWhenRecordsAreAppended) {
  std::vector<size_t> first(200), grown(1000);
  for (size_t i = 0; i < first.size(); ++i) first[i] = i;
  for (size_t i = 0; i < grown.size(); ++i) grown[i] = i;
  std::vector<size_t> train1, valid1, train2, valid2;
  stable_split(first, 0.15, 3, &train1, &valid1);
  stable_split(grown, 0.15, 3, &train2, &valid2);
  for (size_t v : valid1) EXPECT_TRUE(std::binary_search(valid2.begin(), valid2.end(), v)) << v;
  for (size_t t : train1) EXPECT_TRUE(std::binary_search(train2.begin(), train2.end(), t)) << t;
  EXPECT_NEAR(static_cast<double>(valid2.size()) / grown.size(), 0.15, 0.04);
  std::vector<size_t> none_train, none_valid;
  stable_split(first, 0.0, 3, &none_train, &none_valid);
  EXPECT_TRUE(none_valid.empty());
  EXPECT_EQ(none_train.size(), first.size());
}

}  // namespace
}  // namespace loom
