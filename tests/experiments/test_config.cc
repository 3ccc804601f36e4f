// Experiment configs are parsed strictly: every malformed config gets a
// one-line error naming the JSON path of the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "costmodel/cost_model.h"
#include "experiments/config.h"
#include "ir/error.h"
#include "ir/workload_registry.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

const char* kValid = R"({"name": "t", "target": "cpu -threads=1",
  "tasks": [{"workload": "matmul", "params": {"M": 64, "N": 64, "K": 64}}]})";

// The checkout's root (ctest sets LOOM_SOURCE_DIR).
std::filesystem::path source_dir() {
  const char* src = std::getenv("LOOM_SOURCE_DIR");
  if (!src) ADD_FAILURE() << "LOOM_SOURCE_DIR is set by ctest";
  return src ? src : ".";
}

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
  EXPECT_EQ(c.cost_model, "xgb");
  EXPECT_EQ(c.to_json()["search"]["mutation_prob"], 0.85);
}

TEST(Config, UnknownTopLevelKey) { expect_error(R"({"tasks": [{"workload": "matmul"}], "serch": {}})", "serch: unknown key"); }
TEST(Config, ScheduleDatabaseIsShippedNoneOrLogs) {
  auto with = [](const std::string& value) {
    return ExperimentConfig::from_json(nlohmann::json::parse(
        R"({"tasks": [{"workload": "matmul"}], "schedule_database": )" + value + "}"));
  };
  EXPECT_EQ(ExperimentConfig::from_json(nlohmann::json::parse(kValid)).schedule_databases,
            std::vector<std::string>{"shipped"});
  EXPECT_TRUE(with(R"("none")").schedule_databases.empty());
  EXPECT_EQ(with(R"(["a.jsonl", "b.jsonl"])").schedule_databases, (std::vector<std::string>{"a.jsonl", "b.jsonl"}));
  expect_error(R"({"tasks": [{"workload": "matmul"}], "schedule_database": "mine"})",
               "schedule_database: expected \"shipped\", \"none\" or an array of records logs");
  expect_error(R"({"tasks": [{"workload": "matmul"}], "schedule_database": [3]})", "schedule_database[0]");
}
TEST(Config, ANetworkConfigsFirstRoundsMeasureAFewProgramsUnlessSet) {
  EXPECT_EQ(ExperimentConfig::from_json(nlohmann::json::parse(kValid)).search.first_round_measures, 0);
  auto network = [](const std::string& search) {
    return ExperimentConfig::from_json(nlohmann::json::parse(R"({"network": "m.onnx", "search": )" + search + "}"));
  };
  EXPECT_EQ(network("{}").search.first_round_measures, ExperimentConfig::kNetworkFirstRoundMeasures);
  EXPECT_EQ(network(R"({"first_round_measures": 0})").search.first_round_measures, 0);
}

TEST(Config, MissingTasks) { expect_error(R"({"name": "x"})", "tasks: expected a non-empty array"); }
TEST(Config, UnknownWorkload) { expect_error(R"({"tasks": [{"workload": "matmull"}]})", "tasks[0].workload"); }
TEST(Config, NegativeParameter) {
  expect_error(R"({"tasks": [{"workload": "matmul"}, {"workload": "matmul", "params": {"K": -1}}]})", "tasks[1].params.K");
}
TEST(Config, UnknownParameter) { expect_error(R"({"tasks": [{"workload": "matmul", "params": {"Z": 1}}]})", "tasks[0].params.Z"); }
TEST(Config, ConstantsMustNameInputs) {
  expect_error(R"({"tasks": [{"workload": "matmul", "constants": ["C"]}]})", "tasks[0].constants: 'C' is not an input");
}
TEST(Config, ConstantsAreEchoed) {
  ExperimentConfig c = ExperimentConfig::from_json(
      nlohmann::json::parse(R"({"tasks": [{"workload": "matmul", "constants": ["B"]}]})"));
  EXPECT_TRUE(c.tasks[0].task.dag->is_constant("B"));
  EXPECT_EQ(c.to_json()["tasks"][0]["constants"], nlohmann::json::array({"B"}));
}
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
TEST(Config, SearchEnumsParseAndEchoByName) {
  auto j = nlohmann::json::parse(kValid);
  j["search"] = {{"strategy", "random"}, {"task_scheduler", "round_robin"}};
  ExperimentConfig c = ExperimentConfig::from_json(j);
  EXPECT_EQ(c.search.strategy, SearchStrategy::kRandom);
  EXPECT_EQ(c.search.task_scheduler, TaskSchedulerKind::kRoundRobin);
  EXPECT_EQ(c.to_json()["search"]["strategy"], "random");
  EXPECT_EQ(c.to_json()["search"]["task_scheduler"], "round_robin");
}
TEST(Config, UnknownSearchStrategyNamesTheChoices) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "search": {"strategy": "annealing"}})",
               "search.strategy: expected \"evolutionary\" or \"random\"");
}
TEST(Config, SearchSettingsEchoEveryKeyTheyParse) {
  nlohmann::json echo = SearchSettings().to_json();
  EXPECT_EQ(SearchSettings::from_json(echo).to_json(), echo);
}
// experiments/README.md holds every table `loom config doc` prints, verbatim.
TEST(Config, ReadmeSettingsTablesAreTheGeneratedOnes) {
  std::ifstream in(source_dir() / "experiments" / "README.md");
  std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& name : ExperimentConfig::doc_names())
    EXPECT_NE(readme.find(ExperimentConfig::doc_table(name)), std::string::npos)
        << "paste the output of `loom config doc " << name << "` into experiments/README.md";
}
// No other Markdown file holds a settings table that is not generated: a
// table under a `loom config doc` marker is one of the generated ones.
TEST(Config, EverySettingsTableInTheDocsIsGenerated) {
  std::set<std::string> generated;
  for (const auto& name : ExperimentConfig::doc_names()) generated.insert(ExperimentConfig::doc_table(name));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir())) {
    const auto& p = entry.path();
    if (p.extension() != ".md" || p.string().find("/build") != std::string::npos ||
        p.string().find("/docs/results/") != std::string::npos)
      continue;
    std::ifstream f(p);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (size_t at = text.find("| key | meaning |"); at != std::string::npos; at = text.find("| key | meaning |", at + 1)) {
      const size_t marker = text.rfind("<!-- generated by `loom config doc ", at);
      ASSERT_NE(marker, std::string::npos) << p << ": a settings table without its generated marker";
      const size_t end = text.find("\n\n", at);
      const std::string block = text.substr(marker, (end == std::string::npos ? text.size() : end + 1) - marker);
      EXPECT_TRUE(generated.count(block)) << p << ": a settings table that `loom config doc` does not print";
    }
  }
}
TEST(Config, EveryConfigSettingEchoesAndParsesBack) {
  ExperimentConfig c = ExperimentConfig::from_json(nlohmann::json::parse(R"({"tasks": [{"workload": "matmul"}]})"));
  nlohmann::json echo = c.to_json();
  EXPECT_EQ(ExperimentConfig::from_json(echo).to_json(), echo);
}
TEST(Config, UnknownCostModel) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "cost_model": {"kind": "svm"}})", "cost_model.kind");
}
TEST(Config, CostModelScopeParsesAndEchoes) {
  ExperimentConfig shared = ExperimentConfig::from_json(nlohmann::json::parse(kValid));
  EXPECT_EQ(shared.cost_model_scope, "shared");
  ExperimentConfig c = ExperimentConfig::from_json(
      nlohmann::json::parse(R"({"tasks": [{"workload": "matmul"}], "cost_model": {"scope": "task"}})"));
  EXPECT_EQ(c.cost_model_scope, "task");
  EXPECT_EQ(c.to_json()["cost_model"]["scope"], "task");
}
TEST(Config, TaskModelAfterParsesAndEchoes) {
  ExperimentConfig c = ExperimentConfig::from_json(nlohmann::json::parse(
      R"({"tasks": [{"workload": "matmul"}], "cost_model": {"scope": "task", "task_model_after": 256}})"));
  EXPECT_EQ(c.task_model_after, 256);
  EXPECT_EQ(c.to_json()["cost_model"]["task_model_after"], 256);
}
TEST(Config, TheEchoedCostModelSettingsParseAgain) {
  ExperimentConfig c = ExperimentConfig::from_json(nlohmann::json::parse(kValid));
  nlohmann::json j = nlohmann::json::parse(kValid);
  j["cost_model"] = c.to_json()["cost_model"];
  EXPECT_EQ(ExperimentConfig::from_json(j).to_json()["cost_model"], c.to_json()["cost_model"]);
}
TEST(Config, TaskModelAfterNeedsTaskScope) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "cost_model": {"task_model_after": 256}})",
               "cost_model.task_model_after");
}
TEST(Config, UnknownCostModelScope) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "cost_model": {"scope": "global"}})", "cost_model.scope");
}
TEST(Config, MeasureWrongType) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "measure": {"repeat": 2.5}})", "measure.repeat");
  expect_error(R"({"tasks": [{"workload": "matmul"}], "measure": {"quiet_wait_ms": -1}})", "measure.quiet_wait_ms");
}
TEST(Config, UnknownBaseline) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "baselines": ["mkl"]})", "baselines[0]");
}
TEST(Config, UnknownOutput) {
  expect_error(R"({"tasks": [{"workload": "matmul"}], "outputs": {"plot": "x"}})", "outputs.plot");
}

// A config in experiments/configs/ names the committed model as
// "../models/...": paths are taken from the config's folder, like outputs.
TEST(Config, PretrainedModelPathIsRelativeToTheConfigFolder) {
  namespace fs = std::filesystem;
  fs::path dir = loom::testing::scratch_dir() / "loom_config_pretrained" / "configs";
  fs::create_directories(dir);
  std::ofstream(dir / "c.json") << R"({"tasks": [{"workload": "matmul"}],
    "cost_model": {"kind": "mlp", "pretrained": "../models/m.model", "options": {"max_train_seconds": 5}}})";
  ExperimentConfig c = ExperimentConfig::load((dir / "c.json").string());
  EXPECT_EQ(fs::path(c.pretrained_model).lexically_normal(), (dir / "../models/m.model").lexically_normal());
  EXPECT_EQ(c.cost_model_options["max_train_seconds"], 5);
  fs::remove_all(dir.parent_path());
}

// Every config under experiments/configs parses, and a pretrained model it
// names loads with its options (a model saved before a change of the
// features would not).
TEST(Config, EveryCommittedConfigLoads) {
  namespace fs = std::filesystem;
  int configs = 0, pretrained = 0;
  for (const auto& e : fs::recursive_directory_iterator(source_dir() / "experiments" / "configs")) {
    if (e.path().extension() != ".json") continue;
    // Outputs of loom export / report written next to the configs.
    const std::string folder = e.path().parent_path().filename().string();
    auto ends_with = [&](const std::string& suffix) {
      return folder.size() > suffix.size() && folder.compare(folder.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("_export") || ends_with("_report")) continue;
    SCOPED_TRACE(e.path().string());
    ExperimentConfig c = ExperimentConfig::load(e.path().string());
    ++configs;
    if (c.pretrained_model.empty()) continue;
    auto model = load_cost_model(c.pretrained_model, c.cost_model_options);
    EXPECT_EQ(model->name(), c.cost_model);
    ++pretrained;
  }
  EXPECT_GE(configs, 8);
  EXPECT_GE(pretrained, 1);
}

// scripts/property_run.sh samples the shapes of property_run_shapes.json: a
// workload added to the registry without a shape there would go unchecked.
TEST(Config, PropertyRunShapesCoverEveryRegistryWorkload) {
  ExperimentConfig c =
      ExperimentConfig::load((source_dir() / "experiments" / "configs" / "property_run_shapes.json").string());
  std::set<std::string> covered;
  for (const auto& t : c.tasks) covered.insert(t.task.workload);
  for (const auto& w : workload_registry())
    EXPECT_TRUE(covered.count(w.name)) << w.name << " has no shape in experiments/configs/property_run_shapes.json";
}

}  // namespace
}  // namespace loom
