// Export round trips: the exported library (the LLVM object of the measured
// kernel) and the exported C source both link into the generated harness
// and compute the reference result, for random schedules of several
// workloads — vector tails, parallel loops and cache stages among them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "experiments/export.h"
#include "experiments/export_check.h"
#include "ir/lower.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"
#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  return loom::testing::scratch_dir() / ("loom_export_" + std::to_string(getpid()) + "_" + name);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

MeasureRecord record_of(const Task& task, const State& s, double seconds) {
  MeasureRecord rec{task, s.steps_json(), {}};
  rec.result.costs_s = {seconds};
  return rec;
}

ExportCheckOptions quick_check() {
  ExportCheckOptions o;
  o.rounds = 1;
  o.measure.repeat = 1;
  o.measure.min_repeat_ms = 0;
  return o;
}

// Every build of every result is correct (a slowdown is not looked at).
void expect_all_correct(const std::vector<ExportCheckResult>& results, size_t n) {
  ASSERT_EQ(results.size(), n);
  for (const auto& r : results) {
    EXPECT_EQ(r.jit_problem, "") << r.task;
    ASSERT_EQ(r.builds.size(), 2u) << r.task;  // library + C
    for (const auto& b : r.builds) EXPECT_EQ(b.problem, "") << r.task << ": " << b.build;
  }
}

TEST(Export, WritesHeaderObjectLibraryCSourceRecordAndLoops) {
  Task task = Task::make("matmul", nlohmann::json{{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=1"));
  auto dir = temp_dir("files");
  auto files = export_best({task}, {record_of(task, State::initial(task.dag), 2e-6)}, dir.string());
  ASSERT_EQ(files.size(), 1u);
  const ExportedFiles& e = files[0];
  for (const auto& p : {e.header_path, e.object_path, e.library_path, e.c_path, e.record_path, e.loop_nest_path})
    EXPECT_TRUE(fs::exists(p)) << p;
  EXPECT_TRUE(fs::exists(dir / "loom_runtime.c"));
  std::string h = read_text(e.header_path);
  EXPECT_NE(h.find("void " + e.stem + "(float* A, float* B, float* C);"), std::string::npos) << h;
  EXPECT_NE(h.find("void " + e.stem + "_packed(float** args);"), std::string::npos) << h;
  EXPECT_NE(h.find("C [8, 8]  output"), std::string::npos) << h;
  fs::remove_all(dir);
}

TEST(Export, StemNamesWorkloadParamsAndThreads) {
  Task a = Task::make("matmul", nlohmann::json{{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=2"));
  EXPECT_EQ(task_file_stem(a), "matmul_K8_M8_N8_t2");
}

TEST(Export, RandomSchedulesRoundTripThroughLibraryAndCSource) {
  // Odd extents (vector tails), two threads (parallel loops), a reduction
  // with cache stages (matmul), padding (conv), row reductions (softmax).
  std::vector<Task> tasks = {
      Task::make("matmul", nlohmann::json{{"M", 19}, {"N", 37}, {"K", 23}}, Target::parse("cpu -threads=2")),
      Task::make("conv2d_bias_relu", nlohmann::json{{"C", 5}, {"H", 9}, {"W", 11}, {"K", 18}},
                 Target::parse("cpu -threads=2")),
      Task::make("softmax", nlohmann::json{{"M", 6}, {"N", 45}}, Target::parse("cpu -threads=1")),
      Task::make("depthwise_conv2d", nlohmann::json{{"C", 7}, {"H", 10}, {"W", 13}}, Target::parse("cpu -threads=1")),
      // A network's conv with constant weights: pre-transformed arguments.
      Task::make("subgraph", nlohmann::json::parse(R"({"inputs": [{"shape": [1, 5, 9, 11]},
                     {"shape": [18, 5, 3, 3], "constant": true}, {"shape": [18], "constant": true}],
                     "nodes": [{"op": "conv2d", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["in0", "in1", "in2"]},
                               {"op": "relu", "attrs": {}, "inputs": ["n0"]}]})"),
                 Target::parse("cpu -threads=2")),
  };
  std::mt19937_64 rng(11);
  bool saw_parallel = false, saw_tail = false, saw_temp = false, saw_pretransformed = false;
  int programs = 0;
  for (const Task& task : tasks) {
    for (const State& s : sample(make_sketch_task(task), 2, rng)) {
      LoweredFunc f = lower(s);
      saw_temp = saw_temp || !f.temps.empty();
      for (const Buffer& b : f.args) saw_pretransformed = saw_pretransformed || b.layout != nullptr;
      visit_stmt(f.body, [&](const Stmt& x) {
        if (!x || x->kind != StmtKind::kFor) return;
        saw_parallel = saw_parallel || x->for_kind == ForKind::kParallel;
        saw_tail = saw_tail || (x->for_kind == ForKind::kVectorized && x->extent % task.target.vector_width() != 0);
      });
      auto dir = temp_dir("random" + std::to_string(programs++));
      auto files = export_best({task}, {record_of(task, s, 1e-3)}, dir.string());
      auto results = check_exports(files, dir.string(), quick_check());
      expect_all_correct(results, 1);
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "schedule: " << s.steps_json().dump() << "\nexport kept in " << dir;
        return;
      }
      fs::remove_all(dir);
    }
  }
  // The sample must have exercised what the test is about.
  EXPECT_TRUE(saw_parallel);
  EXPECT_TRUE(saw_tail);
  EXPECT_TRUE(saw_temp);
  EXPECT_TRUE(saw_pretransformed);
}

TEST(Export, CheckReportsAWrongExportedBuild) {
  Task task = Task::make("matmul", nlohmann::json{{"M", 4}, {"N", 4}, {"K", 4}}, Target::parse("cpu -threads=1"));
  auto dir = temp_dir("wrong");
  auto files = export_best({task}, {record_of(task, State::initial(task.dag), 1e-6)}, dir.string());
  ASSERT_EQ(files.size(), 1u);
  // Break the C source: after the kernel, every output element gets 1 added.
  std::string src = read_text(files[0].c_path);
  size_t at = src.find("void " + files[0].stem + "_packed(float** args) {");
  ASSERT_NE(at, std::string::npos);
  size_t end = src.find("\n}", at);
  ASSERT_NE(end, std::string::npos);
  src.insert(end, "\n  for (int i = 0; i < 16; ++i) args[2][i] += 1.0f;");
  std::ofstream(files[0].c_path) << src;
  auto results = check_exports(files, dir.string(), quick_check());
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].builds.size(), 2u);
  EXPECT_EQ(results[0].builds[0].problem, "");  // the library is untouched
  EXPECT_NE(results[0].builds[1].problem.find("WRONG RESULT"), std::string::npos) << results[0].builds[1].problem;
  EXPECT_TRUE(export_check_failed(results[0], results[0].builds[1], 1.1));
  fs::remove_all(dir);
}

// The README's example program builds against `loom export`'s library and
// computes the product (here of the untuned schedule, to keep it short).
TEST(Export, ReadmeExampleLinksTheExportedLibrary) {
  auto dir = temp_dir("readme");
  fs::create_directories(dir);
  Task task = Task::make("matmul", nlohmann::json{{"M", 1024}, {"N", 1024}, {"K", 1024}},
                         Target::parse("cpu -threads=1"));
  State s = State::initial(task.dag);
  int c = s.stage_index("C");
  s = s.split(c, 1, {16}).annotate(c, 2, IterAnnotation::kVectorize);
  std::ofstream(dir / "gemm.jsonl") << record_to_json(record_of(task, s, 0.5)).dump() << "\n";
  std::ofstream(dir / "gemm.json") << R"({"name": "gemm", "target": "cpu -threads=1",
    "tasks": [{"workload": "matmul", "params": {"M": 1024, "N": 1024, "K": 1024}}]})";
  auto exported = testing::run_loom("export " + (dir / "gemm.json").string());
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const fs::path out = dir / "gemm_export";
  const std::string example = std::string(std::getenv("LOOM_SOURCE_DIR")) + "/experiments/examples/matmul_app.c";
  std::string cmd = "cc -O2 -I" + out.string() + " " + example + " " + (out / "libmatmul_K1024_M1024_N1024_t1.a").string() +
                    " -lmvec -lm -pthread -o " + (dir / "app").string() + " && " + (dir / "app").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace loom
