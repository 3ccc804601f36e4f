// `loom run` on bad input: a one-line error naming the offending field, exit
// code 2, no crash. And `loom costmodel`'s per-program predictions file and
// transfer evaluation, and the warning about a model trained elsewhere.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace {

using Result = loom::testing::CliResult;
using loom::testing::run_loom;
using loom::testing::scratch_path;
using loom::testing::write_scratch_file;

void expect_usage_error(const std::string& file_text, const std::string& needle) {
  std::string f = write_scratch_file("case.json", file_text);
  Result r = run_loom("run " + f);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
  // One line: the error and nothing else.
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(LoomRun, MissingFileIsAnError) {
  Result r = run_loom("run /nonexistent/loom_schedule.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("cannot open"), std::string::npos) << r.output;
}

TEST(LoomRun, MalformedJsonIsAnError) { expect_usage_error("{\"workload\": \"matmul\",", "malformed JSON"); }

TEST(LoomRun, UnknownWorkloadIsNamed) {
  expect_usage_error(R"({"workload": "matmull", "params": {}})", "unknown workload 'matmull'");
}

TEST(LoomRun, BadParameterIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "params": {"M": -4}})", "params.M");
}

TEST(LoomRun, UnknownParameterIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "params": {"Q": 4}})", "params.Q");
}

TEST(LoomRun, InvalidStepIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "params": {"M": 8, "N": 8, "K": 8}, "steps": [["SP", 2, 0, 8, [16], 1]]})",
                     "step 0 (SP)");
}

TEST(LoomRun, MalformedStepIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "params": {"M": 8, "N": 8, "K": 8}, "steps": [["SP", 2]]})",
                     "steps[0]");
}

TEST(LoomRun, UnknownTopLevelKeyIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "paramz": {}})", "paramz");
}

TEST(LoomRun, BadTargetIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "target": "cpu -threads=zero"})", "-threads");
}

TEST(LoomFlags, BadIntegerFlagValueIsNamedForEveryVerb) {
  std::string f = write_scratch_file("flags.json", R"({"workload": "matmul", "params": {"M": 8, "N": 8, "K": 8}})");
  for (std::string args : {"run " + f + " --repeat x", "sketches " + f + " --threads two",
                           "baseline " + f + " --threads 0", "sample " + f + " -n many",
                           "report " + f + " --min-repeat-ms soon"}) {
    Result r = run_loom(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("expected an integer"), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

TEST(LoomFlags, ABadDurationIsNamed) {
  for (std::string value : {"5x", "-3m", "0", "soon"}) {
    Result r = run_loom("tune config.json --time-budget " + value);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--time-budget: expected a positive duration such as 90s, 5m or 1.5h, got '" + value + "'"),
              std::string::npos)
        << r.output;
  }
}

TEST(LoomRun, CorrectScheduleReportsCorrect) {
  std::string f = write_scratch_file("ok.json", R"({"workload": "matmul", "params": {"M": 16, "N": 16, "K": 16},
    "steps": [["SP", 2, 1, 16, [8], 1], ["AN", 2, 2, "vectorize"]]})");
  Result r = run_loom("run " + f + " --repeat 1 --min-repeat-ms 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("correct"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GFLOP/s"), std::string::npos) << r.output;
}

TEST(LoomRun, PrintAsmShowsTheKernelsMachineCode) {
  std::string f = write_scratch_file("asm.json", R"({"workload": "matmul", "params": {"M": 16, "N": 16, "K": 16},
    "steps": [["SP", 2, 1, 16, [16], 1], ["AN", 2, 2, "vectorize"]]})");
  Result r = run_loom("run " + f + " --print-asm --repeat 1 --min-repeat-ms 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ret"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mul"), std::string::npos) << "the multiply of the product: " << r.output;
}

// A pretrained model of another kind than the config's, or a missing file,
// stops `loom tune` before anything is measured, with one line naming it.
TEST(LoomTune, PretrainedModelOfAnotherKindOrMissingIsNamed) {
  const std::string src = std::getenv("LOOM_SOURCE_DIR") ? std::getenv("LOOM_SOURCE_DIR") : "";
  ASSERT_FALSE(src.empty());
  const std::string log = scratch_path("pretrained.jsonl");
  for (const auto& [cost_model, needle] :
       {std::pair<std::string, std::string>{R"({"kind": "xgb", "pretrained": ")" + src +
                                                R"(/experiments/models/suite_mlp.model"})",
                                            "cost_model.kind is 'xgb' but cost_model.pretrained"},
        {R"({"kind": "mlp", "pretrained": "/nonexistent/m.model"})", "cannot read cost model file"}}) {
    std::string cfg = write_scratch_file("pretrained.json", R"({"tasks": [{"workload": "matmul"}], "cost_model": )" +
                                                        cost_model + R"(, "outputs": {"log": ")" + log + R"("}})");
    Result r = run_loom("tune " + cfg);  // the settings echo (stdout) and one error line (stderr)
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const size_t error_at = r.output.find("loom tune: error: ");
    ASSERT_NE(error_at, std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("error", error_at + 20), std::string::npos) << "one error only: " << r.output;
    const std::string error_line = r.output.substr(error_at, r.output.find('\n', error_at) - error_at);
    EXPECT_NE(error_line.find(needle), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(log)) << "nothing measured, no log";
  }
}

// A task whose tensors cannot fit in a worker fails at once (no reference
// computed, nothing measured) with one line naming the tensor, its size and
// the limit.
TEST(LoomTune, TaskThatCannotFitInMemoryIsNamedAtOnce) {
  const std::string log = scratch_path("huge.jsonl");
  std::string cfg = write_scratch_file("huge.json", R"({"tasks": [{"workload": "matmul",
      "params": {"M": 1000000, "N": 1000000, "K": 1000000}}], "outputs": {"log": ")" + log + R"("}})");
  Result r = run_loom("tune " + cfg);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const size_t error_at = r.output.find("loom tune: error: ");
  ASSERT_NE(error_at, std::string::npos) << r.output;
  const std::string error_line = r.output.substr(error_at, r.output.find('\n', error_at) - error_at);
  EXPECT_NE(error_line.find("tensor A [1000000x1000000] is 3.6 TiB"), std::string::npos) << error_line;
  EXPECT_NE(error_line.find("memory limit of 8.0 GiB (measure.max_memory_mb)"), std::string::npos) << error_line;
  EXPECT_EQ(r.output.find('\n', error_at), r.output.size() - 1) << "the error is the last line: " << r.output;
  EXPECT_FALSE(std::filesystem::exists(log)) << "nothing measured, no log";
}

// Verbs that compute the reference in-process refuse such a task when they
// read it, before allocating anything.
TEST(LoomSample, TaskThatCannotFitInMemoryIsRefusedBeforeTheReference) {
  std::string f = write_scratch_file("huge_sample.json", R"({"workload": "matmul", "params": {"M": 1000000, "N": 1000000, "K": 1000000}})");
  Result r = run_loom("sample " + f + " -n 1 --no-ir");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tensor A [1000000x1000000] is 3.6 TiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(the machine's physical memory)"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// --task samples one task of an experiment config (scripts/property_run.sh);
// --quiet prints the programs that fail and the summary line, nothing else.
TEST(LoomSample, QuietSamplesTheChosenTaskOfAConfig) {
  std::string f = write_scratch_file("sample_config.json", R"({"tasks": [{"workload": "matmul", "params": {"M": 5, "N": 7, "K": 3}},
    {"workload": "softmax", "params": {"M": 3, "N": 7}}]})");
  Result r = run_loom("sample " + f + " --task 1 -n 3 --threads 2 --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("task: softmax M=3 N=7  target: cpu -threads=2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 programs: 3 correct, 0 wrong, 0 errors"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("== program"), std::string::npos) << r.output;
  Result missing = run_loom("sample " + f + " --task 2 -n 1");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("--task 2: " + f + " has 2 tasks"), std::string::npos) << missing.output;
}

TEST(LoomRun, ATensorWhoseElementCountOverflowsIsNamed) {
  expect_usage_error(R"({"workload": "matmul", "params": {"M": 4000000000000, "N": 4000000000000}})",
                     ".params: matmul K=512 M=4000000000000 N=4000000000000: tensor C has more than 2^63 elements");
}

TEST(LoomCostmodel, PredictionsListEveryHeldOutProgramWithLabelAndScore) {
  std::string log = scratch_path("pred.jsonl"), csv = write_scratch_file("pred.csv", ""),
              model = write_scratch_file("pred.model", "");
  Result c = run_loom("costmodel collect matmul --params '{\"M\":16,\"N\":16,\"K\":16}' --n 12 --log " + log +
                      " --seed 1");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  Result t = run_loom("costmodel train " + log + " --model random --out " + model +
                      " --split record --test-fraction 0.5 --predictions " + csv);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "task,label,score,steps");
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(line.rfind("\"matmul K=16 M=16 N=16\",", 0), 0u) << line;
    EXPECT_NE(line.find("\"[[\""), std::string::npos) << line;  // the steps, CSV-quoted JSON
  }
  EXPECT_EQ(rows, 6);  // half of the 12 programs held out
}

// A pretrained model trained on programs timed elsewhere is used, with a
// one-line warning naming both machines; on a machine of its kind, silently.
TEST(LoomTune, APretrainedModelFromAnotherKindOfMachineIsWarnedAbout) {
  std::string log = scratch_path("elsewhere.jsonl"), model = write_scratch_file("elsewhere.model", ""),
              tune_log = scratch_path("elsewhere_tune.jsonl");
  setenv("LOOM_TEST_MACHINE_CPU", "Elsewhere CPU", 1);
  Result c = run_loom("costmodel collect matmul --params '{\"M\":16,\"N\":16,\"K\":16}' --n 6 --log " + log);
  Result t = run_loom("costmodel train " + log + " --model random --out " + model);
  unsetenv("LOOM_TEST_MACHINE_CPU");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  ASSERT_EQ(t.exit_code, 0) << t.output;
  std::string cfg = write_scratch_file("elsewhere.json", R"({"tasks": [{"workload": "matmul", "params": {"M": 16, "N": 16, "K": 16}}],
      "search": {"num_trials": 2}, "cost_model": {"kind": "random", "pretrained": ")" + model +
                                                     R"("}, "outputs": {"log": ")" + tune_log + R"("}})");
  Result here = run_loom("tune " + cfg);
  EXPECT_EQ(here.exit_code, 0) << here.output;
  const size_t at = here.output.find("warning: cost model " + model + " was trained on programs timed on Elsewhere CPU (");
  ASSERT_NE(at, std::string::npos) << here.output;
  const std::string line = here.output.substr(at, here.output.find('\n', at) - at);
  EXPECT_NE(line.find("(6 programs); this machine is "), std::string::npos) << line;
  setenv("LOOM_TEST_MACHINE_CPU", "Elsewhere CPU", 1);
  std::filesystem::remove(tune_log);
  Result there = run_loom("tune " + cfg);
  unsetenv("LOOM_TEST_MACHINE_CPU");
  EXPECT_EQ(there.exit_code, 0) << there.output;
  EXPECT_EQ(there.output.find("warning: cost model"), std::string::npos) << there.output;
}

// `loom costmodel transfer`: each task shape held out once, a table row each.
TEST(LoomCostmodel, TransferHoldsOutEachTaskShapeOnce) {
  std::string a = scratch_path("transfer_a.jsonl"), b = scratch_path("transfer_b.jsonl"),
              table = write_scratch_file("transfer.md", "");
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":16,\"N\":16,\"K\":16}' --n 6 --log " + a).exit_code, 0);
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":8,\"N\":32,\"K\":16}' --n 6 --log " + b).exit_code, 0);
  Result r = run_loom("costmodel transfer " + a + " " + b + " --model random --table " + table);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("overall (2 folds over 2 tasks)"), std::string::npos) << r.output;
  std::ifstream in(table);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| matmul K=16 M=16 N=16 (cpu -threads=1) on "), std::string::npos) << text;
  EXPECT_NE(text.find("| matmul K=16 M=8 N=32 (cpu -threads=1) on "), std::string::npos) << text;
  Result one = run_loom("costmodel transfer " + a + " --model random");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_NE(one.output.find("the records hold 1 task shape (matmul float32 "), std::string::npos) << one.output;
  Result out = run_loom("costmodel transfer " + a + " " + b + " --out x.model");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("unknown option --out"), std::string::npos) << out.output;
}

// `loom costmodel train --train-only LOG...`: those logs only train, so the
// split and its held-out records stay those of the logs before the flag; a
// train-only program that is held out (--split record), or of a held-out
// task (--split task), does not train.
TEST(LoomCostmodel, TrainOnlyLogsNeverReachTheHeldOutRecords) {
  std::string a = scratch_path("held_a.jsonl"), b = scratch_path("held_b.jsonl"), both = scratch_path("held_ab.jsonl"),
              model = scratch_path("held.model");
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":16,\"N\":16,\"K\":16}' --n 10 --log " + a).exit_code,
            0);
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":8,\"N\":32,\"K\":16}' --n 6 --log " + b).exit_code, 0);
  {
    std::ofstream out(both);
    for (const auto& path : {a, b}) out << std::ifstream(path).rdbuf();
  }
  const std::string train = "costmodel train " + a + " --model random --out " + model;
  Result alone = run_loom(train + " --split record --test-fraction 0.2");
  Result by_record = run_loom(train + " --split record --test-fraction 0.2 --train-only " + both);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  ASSERT_EQ(by_record.exit_code, 0) << by_record.output;
  EXPECT_NE(alone.output.find("train: 8 records over 1 tasks; test: 2 records over 1 tasks"), std::string::npos)
      << alone.output;
  EXPECT_NE(by_record.output.find("train: 8 records over 1 tasks; test: 2 records over 1 tasks"), std::string::npos)
      << by_record.output;
  EXPECT_NE(by_record.output.find("train-only: 14 records train, 2 left out (a held-out program)"), std::string::npos)
      << "the other task's 6 and the 8 programs that train anyway\n" << by_record.output;
  Result by_task = run_loom("costmodel train " + a + " " + b + " --model random --out " + model +
                            " --split task --test-fraction 0.5 --train-only " + both);
  ASSERT_EQ(by_task.exit_code, 0) << by_task.output;
  const bool a_held_out = by_task.output.find("held-out task: matmul K=16 M=16 N=16") != std::string::npos;
  EXPECT_NE(by_task.output.find(a_held_out ? "train-only: 6 records train, 10 left out (of a held-out task)"
                                           : "train-only: 10 records train, 6 left out (of a held-out task)"),
            std::string::npos)
      << by_task.output;
}

// `--train-only LOG...`: those logs train the other tasks' folds and are
// never ranked; the flag with no log after it is an error.
TEST(LoomCostmodel, TransferRanksOnlyTheLogsBeforeTrainOnly) {
  std::string a = scratch_path("ranked_a.jsonl"), b = scratch_path("ranked_b.jsonl"),
              extra = scratch_path("train_only.jsonl");
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":16,\"N\":16,\"K\":16}' --n 6 --log " + a).exit_code, 0);
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":8,\"N\":32,\"K\":16}' --n 6 --log " + b).exit_code, 0);
  ASSERT_EQ(run_loom("costmodel collect matmul --params '{\"M\":32,\"N\":8,\"K\":16}' --n 6 --log " + extra).exit_code,
            0);
  Result r = run_loom("costmodel transfer " + a + " " + b + " --model random --train-only " + extra);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("train only, never ranked: records: 6 from 1 log(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overall (2 folds over 2 tasks)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trained on 12,"), std::string::npos) << "the other ranked task and the train-only one\n"
                                                                 << r.output;
  EXPECT_EQ(r.output.find("M=32 N=8"), std::string::npos) << "a train-only task is never ranked\n" << r.output;
  Result empty = run_loom("costmodel transfer " + a + " " + b + " --model random --train-only");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("--train-only needs at least one LOG after it"), std::string::npos) << empty.output;
}

}  // namespace
