// An exported C file compiles and computes the reference result.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/c_compile.h"
#include "experiments/export.h"
#include "ir/lower.h"
#include "ir/reference.h"

namespace loom {
namespace {

TEST(Export, ExportedCSourceCompilesAndMatchesReference) {
  Task task = Task::make("conv2d_bias_relu", nlohmann::json{{"C", 3}, {"H", 8}, {"W", 8}, {"K", 4}},
                         Target::parse("cpu -threads=1"));
  // A record with a real schedule: conv tiled, pad inlined.
  State s = State::initial(task.dag);
  s = s.compute_inline(s.stage_index("pad"));
  int conv = s.stage_index("conv");
  s = s.split(conv, 2, {4}).annotate(conv, 4, IterAnnotation::kVectorize);
  MeasureRecord rec{task, s.steps_json(), {}};
  rec.result.costs_s = {1e-3};
  auto dir = std::filesystem::temp_directory_path() / ("loom_export_" + std::to_string(getpid()));
  auto files = export_best({task}, {rec}, dir.string());
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0].c_path);
  std::stringstream src;
  src << in.rdbuf();
  std::string stem = task_file_stem(task);
  CompiledCModule m(src.str(), stem + "_packed");
  auto inputs = random_inputs(*task.dag, 3);
  auto ref = evaluate_reference(*task.dag, inputs);
  std::map<std::string, std::vector<float>> bufs = inputs;
  bufs["relu"].assign(ref.at("relu").size(), 0.f);
  LoweredFunc f = lower(s);
  std::vector<float*> args;
  for (const auto& b : f.args) args.push_back(bufs.at(b.name).data());
  m.run(args);
  EXPECT_EQ(compare_outputs(bufs["relu"], ref.at("relu")), "");
  EXPECT_TRUE(std::filesystem::exists(files[0].record_path));
  EXPECT_TRUE(std::filesystem::exists(files[0].loop_nest_path));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace loom
