// `loom network`: tasks with weights, an end-to-end run checked against
// PyTorch, a config for `loom tune`, a graph JSON round trip, and one-line
// errors for bad models. The models are the tiny ones of
// scripts/make_models.py --small, generated here.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "measure/records.h"
#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;

using Result = loom::testing::CliResult;
using loom::testing::run_loom;

class LoomNetwork : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch, torchvision, onnx' >/dev/null 2>&1") != 0) {
      skip_ = "/usr/bin/python3 lacks torch, torchvision or onnx";
      return;
    }
    const char* src = std::getenv("LOOM_SOURCE_DIR");
    const fs::path root = src ? fs::path(src) : fs::path(__FILE__).parent_path().parent_path().parent_path();
    dir_ = loom::testing::scratch_dir() / ("loom_network_cli_" + std::to_string(getpid()));
    const std::string cmd = "/usr/bin/python3 " + (root / "scripts" / "make_models.py").string() + " " +
                            dir_.string() + " --small >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) generate_error_ = "failed: " + cmd;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_EQ(generate_error_, "");
  }
  static std::string model(const std::string& file) { return (dir_ / file).string(); }
  // The measure.flush_cache `loom config show` prints for a tiny-CNN config
  // with `measure` settings, on a machine whose last-level cache holds `llc`
  // ("" = this machine's). The tiny CNN's weights (about 5 KB) fit in half
  // of any machine's cache; $LOOM_TEST_LLC_BYTES sets a cache they fill most
  // of ("8K") or exceed ("1K").
  static std::string shown_flush(const std::string& name, const std::string& measure, const std::string& llc) {
    const std::string config = model(name + ".json");
    std::ofstream(config) << R"({"network": "tiny_cnn.onnx", "measure": )" << measure << "}";
    if (!llc.empty()) setenv("LOOM_TEST_LLC_BYTES", llc.c_str(), 1);
    Result r = run_loom("config show " + config);
    unsetenv("LOOM_TEST_LLC_BYTES");
    if (r.exit_code != 0) return r.output;
    for (const char* v : {"true", "false"})
      if (r.output.find(std::string("\"flush_cache\": ") + v) != std::string::npos) return v;
    return r.output;
  }
  // A network config NAME.json of the tiny CNN (random cost model, rounds of
  // 4 trials), tuned; "" (with a failure) when tuning fails.
  static std::string tuned_tiny_cnn(const std::string& name, int threads, int trials) {
    const std::string config = model(name + ".json");
    std::ofstream(config) << nlohmann::json{{"network", "tiny_cnn.onnx"}, {"name", name},
                                            {"target", "cpu -threads=" + std::to_string(threads)},
                                            {"search", {{"num_trials", trials}, {"measures_per_round", 4}}},
                                            {"cost_model", {{"kind", "random"}}}}.dump();
    Result tune = run_loom("tune " + config);
    if (tune.exit_code == 0) return config;
    ADD_FAILURE() << tune.output;
    return "";
  }
  static inline fs::path dir_;
  static inline std::string skip_, generate_error_;
};

TEST_F(LoomNetwork, TasksListsEachFusedSubgraphWithItsWeight) {
  Result r = run_loom("network tasks " + model("tiny_cnn.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Batch norms fold into the convs; bias, residual add and ReLU fuse in.
  EXPECT_NE(r.output.find("conv2d+relu 1x8x8x8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("conv2d+add+relu 1x8x8x8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("6 fused subgraphs, 6 distinct tasks"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunMatchesPyTorchOnTwoThreads) {
  Result r = run_loom("network run " + model("tiny_attention.onnx") + " --threads 2 --rounds 2 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("check output against PyTorch (the frozen module): match"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PyTorch median"), std::string::npos) << r.output;
}

// ONNX Runtime (scripts/setup.sh installs onnxruntime-node) runs the same
// ONNX file in the same rounds; --check compares Loom's outputs with its.
TEST_F(LoomNetwork, RunTimesOnnxRuntimeInTheSameRoundsAndChecksAgainstIt) {
  if (const std::string why = loom::testing::onnxruntime_missing(); !why.empty()) GTEST_SKIP() << why;
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --baselines ort --rounds 2 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ONNX Runtime median "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Loom runs at "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x ONNX Runtime's speed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check output against ONNX Runtime: match"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("PyTorch median"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunWithoutOnnxRuntimeWarnsInOneLineAndGoesOn) {
  setenv("LOOM_ONNXRUNTIME", model("no_such_package").c_str(), 1);
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --default-schedules --rounds 1 --check");
  unsetenv("LOOM_ONNXRUNTIME");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: ONNX Runtime skipped: onnxruntime-node is not installed at " +
                          model("no_such_package")),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("check output against PyTorch (the frozen module): match"), std::string::npos) << r.output;
}

// The fixture's Relu has input x of shape [batch, 4].
TEST_F(LoomNetwork, ShapeFlagPinsADynamicDimension) {
  Result r = run_loom("network run " + model("bad_dynamic_batch.onnx") + " --shape x=3x4 --default-schedules --rounds 1 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("check y against "), std::string::npos) << r.output;
  Result unpinned = run_loom("network tasks " + model("bad_dynamic_batch.onnx"));
  EXPECT_EQ(unpinned.exit_code, 2) << unpinned.output;
  EXPECT_NE(unpinned.output.find("dynamic dimension 'batch' (pin it: --shape x=Nx4"), std::string::npos)
      << unpinned.output;
  Result bad = run_loom("network tasks " + model("bad_dynamic_batch.onnx") + " --shape x=3by4");
  EXPECT_NE(bad.output.find("shape 'x=3by4': expected NAME=DIMxDIMx..."), std::string::npos) << bad.output;
}

TEST_F(LoomNetwork, NetworkConfigsInputShapesPinTheModel) {
  const std::string config = model("pinned.json");
  std::ofstream(config) << R"({"network": "bad_dynamic_batch.onnx", "input_shapes": {"x": [5, 4]}})";
  Result show = run_loom("config show " + config);
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("\"input_shapes\""), std::string::npos) << show.output;
  std::ofstream(config) << R"({"network": "bad_dynamic_batch.onnx", "input_shapes": {"x": "5x4"}})";
  Result bad = run_loom("config show " + config);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("input_shapes.x: expected a list of dims"), std::string::npos) << bad.output;
}

// Without a log every task's schedule is chosen with nothing timed (the
// shipped database and cost model); the network still matches.
TEST_F(LoomNetwork, RunChoosesEveryTasksScheduleWithNothingTimed) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --baselines none --rounds 1 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chose 6 schedules in "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(0 tuned from the log, 6 chosen untimed, 0 default schedules)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("against the reference interpreter: match"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunWithDefaultSchedulesChoosesNothing) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --default-schedules --baselines none --rounds 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("chose "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(0 tuned from the log, 6 default schedules)"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunNamesAMissingDatabase) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --database " + model("no_such.jsonl"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(model("no_such.jsonl")), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunTimesEachRoundsTurnOfRunsAndItsFirstRun) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --default-schedules --baselines none --rounds 2 --runs 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("over 2 rounds of 3 runs (first runs after a quiet machine: "), std::string::npos)
      << r.output;
}

TEST_F(LoomNetwork, RunRefusesZeroRunsPerRound) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --default-schedules --baselines none --runs 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--runs"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, RunRefusesAnUnknownBaseline) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --baselines tvm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--baselines: unknown baseline 'tvm' (known: torch, ort, none)"), std::string::npos)
      << r.output;
}

TEST_F(LoomNetwork, RunWithoutTorchScriptChecksAgainstTheInterpreter) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") + " --baselines none --rounds 1 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("against the reference interpreter: match"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, ProfileListsEveryTaskWithItsTimeInTheNetwork) {
  Result r = run_loom("network run " + model("tiny_cnn.onnx") +
                      " --default-schedules --baselines none --rounds 2 --runs 3 --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("profile (6 runs): "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("of which kernels"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("re-run at once"), std::string::npos) << r.output;
  for (const char* task : {"conv2d+relu 1x8x8x8", "conv2d+add+relu 1x8x8x8", "gemm 1x10"})
    EXPECT_NE(r.output.find(task), std::string::npos) << task << "\n" << r.output;
}

TEST_F(LoomNetwork, ImportedGraphJsonRunsLikeTheModel) {
  const std::string json = model("tiny_cnn.graph.json");
  Result imp = run_loom("network import " + model("tiny_cnn.onnx") + " " + json);
  ASSERT_EQ(imp.exit_code, 0) << imp.output;
  EXPECT_TRUE(fs::exists(model("tiny_cnn.graph.bin")));
  Result r = run_loom("network run " + json + " --torch " + model("tiny_cnn.pt") + " --default-schedules --rounds 1 --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(": match"), std::string::npos) << r.output;
}

TEST_F(LoomNetwork, ConfigHoldsEveryTaskWithItsWeightAsASubgraphWorkload) {
  const std::string config = model("tiny_cnn_tune.json");
  Result r = run_loom("network tasks " + model("tiny_cnn.onnx") + " --config " + config + " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(config));
  EXPECT_EQ(j["target"], "cpu -threads=2");
  ASSERT_EQ(j["tasks"].size(), 6u);
  for (const auto& t : j["tasks"]) {
    EXPECT_EQ(t["workload"], "subgraph");
    EXPECT_EQ(t["weight"], 1);
  }
  // The config parses with every task built (`loom config show`).
  Result show = run_loom("config show " + config);
  EXPECT_EQ(show.exit_code, 0) << show.output;
}

// A network config names the model; `loom tune` tunes its tasks together,
// printing the per-task table and the estimated network latency each round,
// and `network run --log` runs the tuned ones, warning of the others.
TEST_F(LoomNetwork, NetworkConfigTunesTheModelsTasksAndItsLogRunsTheNetwork) {
  const std::string config = model("tiny_cnn_network.json");
  std::ofstream(config) << R"({"network": "tiny_cnn.onnx", "batch": 1, "target": "cpu -threads=1",
    "search": {"num_trials": 8, "measures_per_round": 4}, "cost_model": {"kind": "random"}})";
  Result show = run_loom("config show " + config);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("\"network\""), std::string::npos) << show.output;
  Result tune = run_loom("tune " + config);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("(4 of 6 tasks not measured yet)"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("weighted total latency"), std::string::npos) << tune.output;
  const std::string log = model("tiny_cnn.jsonl");  // named after the model
  ASSERT_TRUE(fs::exists(log));
  Result run = run_loom("network run " + model("tiny_cnn.onnx") + " --log " + log + " --baselines none --rounds 1 --check");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("(2 tuned from the log, 4 chosen untimed, 0 default schedules)"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("warning: " + log + " has no valid record for task"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(": match"), std::string::npos) << run.output;
}

// `tune --trials 0` writes every task's schedule chosen with nothing timed
// to the log; `network run --log` runs them, and the next `tune` measures
// them first.
TEST_F(LoomNetwork, TuneWithZeroTrialsWritesUntimedSchedulesThatRunAndLeadTuning) {
  const std::string config = model("tiny_cnn_untimed.json");
  const std::string log = model("tiny_cnn_untimed.jsonl");
  fs::remove(log);
  std::ofstream(config) << R"({"network": "tiny_cnn.onnx", "target": "cpu -threads=1", "search": {"num_trials": 12,
    "measures_per_round": 4, "population": 64, "generations": 1}, "cost_model": {"kind": "random"},
    "outputs": {"log": "tiny_cnn_untimed.jsonl"}})";
  Result untimed = run_loom("tune " + config + " --trials 0");
  ASSERT_EQ(untimed.exit_code, 0) << untimed.output;
  EXPECT_NE(untimed.output.find("chose 6 untimed schedules in "), std::string::npos) << untimed.output;
  std::vector<loom::MeasureRecord> records = loom::load_records(log);
  ASSERT_EQ(records.size(), 6u);
  for (const auto& r : records) EXPECT_TRUE(r.untimed());
  Result again = run_loom("tune " + config + " --trials 0");
  EXPECT_NE(again.output.find("chose 0 untimed schedules"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("6 tasks the log has already"), std::string::npos) << again.output;

  Result run = run_loom("network run " + model("tiny_cnn.onnx") + " --log " + log + " --baselines none --rounds 1 --check");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("(0 tuned from the log, 6 chosen untimed, 0 default schedules)"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("its untimed record's schedule"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(": match"), std::string::npos) << run.output;

  Result tune = run_loom("tune " + config);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("6 untimed schedules to measure first"), std::string::npos) << tune.output;
  records = loom::load_records(log);
  ASSERT_GT(records.size(), 7u);
  EXPECT_EQ(records[6].steps, records[0].steps) << "the first measured program is the first task's untimed one";
}

// Every task gets one round of trials; the report then runs the whole
// network against PyTorch and ONNX Runtime and writes the table, the per-task breakdown and
// the curve of the estimated latency.
TEST_F(LoomNetwork, ReportOfANetworkConfigComparesTheWholeNetworkWithPyTorchAndOnnxRuntime) {
  const std::string config = tuned_tiny_cnn("tiny_cnn_report", 1, 24);
  ASSERT_NE(config, "");
  Result report = run_loom("report " + config + " --rounds 1");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Loom runs at"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("against PyTorch (the frozen module): match"), std::string::npos) << report.output;
  if (loom::testing::onnxruntime_missing().empty()) {
    EXPECT_NE(report.output.find("x ONNX Runtime's speed"), std::string::npos) << report.output;
    EXPECT_NE(report.output.find("check output against ONNX Runtime: match"), std::string::npos) << report.output;
  }
  EXPECT_NE(report.output.find("24 trials"), std::string::npos) << report.output;
  const fs::path dir = dir_ / "tiny_cnn_report_report";
  std::ifstream md(dir / "network.md");
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| tiny_cnn.onnx | 1 | "), std::string::npos) << text;
  EXPECT_NE(text.find("| ONNX Runtime (ms) | Loom's speed / ONNX Runtime's |"), std::string::npos) << text;
  EXPECT_EQ(text.find("unmeasured"), std::string::npos) << text;
  std::ifstream curve(dir / "network_curve.csv");
  std::string header, first;
  std::getline(curve, header);
  EXPECT_EQ(header, "trials,estimated_ms");
  EXPECT_TRUE(static_cast<bool>(std::getline(curve, first))) << "no point on the curve";
}

// A report of a network tuned in part runs its other tasks on the
// schedules `network run` would choose with nothing timed.
TEST_F(LoomNetwork, ReportRunsTheTasksWithoutARecordOnSchedulesChosenUntimed) {
  const std::string config = tuned_tiny_cnn("tiny_cnn_partial_report", 1, 8);
  ASSERT_NE(config, "");
  Result report = run_loom("report " + config + " --rounds 1");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("tasks without a record: schedules chosen in "), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("against PyTorch (the frozen module): match"), std::string::npos) << report.output;
}

// The whole network as C: tuned kernels (pre-transformed weights among
// them) and default ones, built by the system compiler, give the
// executor's outputs.
TEST_F(LoomNetwork, ExportOfANetworkConfigWritesTheWholeNetworkAsCThatMatchesTheExecutor) {
  const std::string config = tuned_tiny_cnn("tiny_cnn_export", 2, 8);
  ASSERT_NE(config, "");
  Result ex = run_loom("export " + config + " --check --rounds 1");
  // Exit 1 may come from the speed of microsecond kernels; only wrong
  // results matter here.
  ASSERT_TRUE(ex.exit_code == 0 || ex.exit_code == 1) << ex.output;
  std::istringstream lines(ex.output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("!!", 0) == 0) EXPECT_NE(line.find(" runs at "), std::string::npos) << line;
  EXPECT_NE(ex.output.find("0 task(s) on an untimed schedule, 4 on a default schedule"), std::string::npos) << ex.output;
  EXPECT_NE(ex.output.find("the network's C (cc) matches the executor"), std::string::npos) << ex.output;
  std::ifstream c(dir_ / "tiny_cnn_export_export" / "tiny_cnn_export.c");
  std::string text((std::istreambuf_iterator<char>(c)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("_pretransform_"), std::string::npos) << "no tuned kernel reads a pre-transformed weight";
  EXPECT_NE(text.find("void tiny_cnn_export_run(const float* const* inputs, float* const* outputs) {"),
            std::string::npos) << text;
}

TEST_F(LoomNetwork, NetworkConfigTimesItsTasksColdOnlyWhereItsWeightsExceedHalfTheLastLevelCache) {
  EXPECT_EQ(shown_flush("tiny_cnn_fits", "{}", ""), "false");
  EXPECT_EQ(shown_flush("tiny_cnn_fills_most", "{}", "8K"), "true");
  EXPECT_EQ(shown_flush("tiny_cnn_exceeds", "{}", "1K"), "true");
}

TEST_F(LoomNetwork, NetworkConfigsOwnFlushSettingWinsWhateverTheCache) {
  EXPECT_EQ(shown_flush("tiny_cnn_flushed", R"({"flush_cache": true})", ""), "true");
  EXPECT_EQ(shown_flush("tiny_cnn_hot", R"({"flush_cache": false})", "1K"), "false");
}

TEST_F(LoomNetwork, NetworkConfigWithTheWrongBatchIsAOneLineError) {
  const std::string config = model("tiny_cnn_b4.json");
  std::ofstream(config) << R"({"network": "tiny_cnn.onnx", "batch": 4})";
  Result r = run_loom("config show " + config);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("batch: " + model("tiny_cnn.onnx") + " has input 'input' of shape 1x4x8x8, not batch 4"),
            std::string::npos) << r.output;
}

TEST_F(LoomNetwork, UnsupportedOperatorIsAOneLineUsageError) {
  Result r = run_loom("network tasks " + model("bad_unsupported_op.onnx"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "loom network: error: " + model("bad_unsupported_op.onnx") +
                          ": node 'NonMaxSuppression_0' (NonMaxSuppression): unsupported operator\n");
}

TEST_F(LoomNetwork, UnknownSubcommandIsAUsageError) {
  Result r = run_loom("network frobnicate x.onnx");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown subcommand 'frobnicate'"), std::string::npos) << r.output;
}

}  // namespace
