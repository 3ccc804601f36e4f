// Experiment configs are parsed strictly: every malformed config gets a
// one-line error naming the JSON path of the problem.
#include <gtest/gtest.h>

#include "experiments/config.h"
#include "ir/error.h"

namespace loom {
namespace {

const char* kValid = R"({"name": "t", "target": "cpu -threads=1",
  "tasks": [{"workload": "matmul", "params": {"M": 64, "N": 64, "K": 64}}]})";

void expect_error(const std::string& text, const std::string& path_in_message) {
  try {
    ExperimentConfig::from_json(nlohmann::json::parse(text));
    FAIL() << "accepted: " << text;
  } catch (const LoomError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path_in_message), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Config, ValidConfigParsesWithDefaults) {
  ExperimentConfig c = ExperimentConfig::from_json(nlohmann::json::parse(kValid));
  EXPECT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.search.population, 2048);
  EXPECT_EQ(c.search.generations, 4);
  EXPECT_EQ(c.cost_model, "mlp");
  EXPECT_EQ(c.to_json()["search"]["mutation_prob"], 0.85);
}

TEST(Config, UnknownTopLevelKey) { expect_error(R"({"tasks": [{"workload": "matmul"}], "serch": {}})", "serch: unknown key"); }
TEST(Config, MissingTasks) { expect_error(R"({"name": "x"})", "tasks: expected a non-empty array"); }
TEST(Config, UnknownWorkload) { expect_error(R"({"tasks": [{"workload": "matmull"}]})", "tasks[0].workload"); }
TEST(Config, NegativeParameter) {
  expect_error(R"({"tasks": [{"workload": "matmul"}, {"workload": "matmul", "params": {"K": -1}}]})", "tasks[1].params.K");
}
TEST(Config, UnknownParameter) { expect_error(R"({"tasks": [{"workload": "matmul", "params": {"Z": 1}}]})", "tasks[0].params.Z"); }
TEST(Config, WeightNotANumber) { expect_error(R"({"tasks": [{"workload": "matmul", "weight": "heavy"}]})", "tasks[0].weight"); }
TEST(Config, UnknownTaskKey) { expect_error(R"({"tasks": [{"workload": "matmul", "wieght": 2}]})", "tasks[0].wieght"); }
TEST(Config, BadTargetKind) { expect_error(R"({"target": "tpu", "tasks": [{"workload": "matmul"}]})", "target"); }
TEST(Config, BadThreads) { expect_error(R"({"target": "cpu -threads=0", "tasks": [{"workload": "matmul"}]})", "-threads"); }
TEST(Config, SearchKeyWrongType) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "search": {"population": "big"}})", "search.population");
}
TEST(Config, SearchUnknownKey) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "search": {"generation": 4}})", "search.generation");
}
TEST(Config, ProbabilityOutOfRange) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "search": {"mutation_prob": 1.5}})", "search.mutation_prob");
}
TEST(Config, ConfirmationSettingsParseAndEcho) {
  auto j = nlohmann::json::parse(kValid);
  EXPECT_EQ(ExperimentConfig::from_json(j).search.confirm_top, 8);
  j["search"] = {{"confirm_top", 0}, {"confirm_rounds", 5}};
  ExperimentConfig c = ExperimentConfig::from_json(j);
  EXPECT_EQ(c.search.confirm_top, 0);
  EXPECT_EQ(c.to_json()["search"]["confirm_rounds"], 5);
}
TEST(Config, NegativeConfirmTop) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "search": {"confirm_top": -1}})", "search.confirm_top");
}
TEST(Config, UnknownCostModel) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "cost_model": {"kind": "svm"}})", "cost_model.kind");
}
TEST(Config, MeasureWrongType) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "measure": {"repeat": 2.5}})", "measure.repeat");
}
TEST(Config, UnknownBaseline) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "baselines": ["mkl"]})", "baselines[0]");
}
TEST(Config, UnknownOutput) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "outputs": {"plot": "x"}})", "outputs.plot");
}

}  // namespace
}  // namespace loom
