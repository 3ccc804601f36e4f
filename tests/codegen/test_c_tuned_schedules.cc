// The vector C form (what `loom export` writes) of real tuned schedules —
// experiments/schedules/, a tuned GEMM 1024 and a hand-written
// conv2d+bias+ReLU register tile — computes what the LLVM backend's kernel
// computes. (Random schedules of every workload are checked against the
// reference by tests/sketch/test_sampled_programs.cc through
// tests/support/schedule_check.h, in both C forms.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "codegen/c/compile.h"
#include "codegen/llvm/llvm_jit.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/state.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

LoweredFunc lowered_schedule(const std::string& file) {
  const char* root = std::getenv("LOOM_SOURCE_DIR");
  if (!root) ADD_FAILURE() << "LOOM_SOURCE_DIR is set by ctest";
  std::ifstream in(std::string(root ? root : ".") + "/experiments/schedules/" + file);
  nlohmann::json j = nlohmann::json::parse(in);
  auto dag = testing::workload(j.at("workload"), j.at("params").dump());
  return lower(State::from_json(dag, j.at("steps")));
}

void expect_vector_c_matches_jit(const LoweredFunc& f) {
  std::vector<std::vector<float>> a, b;
  for (const auto& buf : f.args) {
    std::vector<float> v(buf.size());
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 7919) % 1000) / 500.f - 1.f;
    a.push_back(v);
    b.push_back(v);
  }
  std::vector<float*> pa, pb;
  for (size_t i = 0; i < a.size(); ++i) pa.push_back(a[i].data()), pb.push_back(b[i].data());
  compile_llvm(f)->run(pa.data());
  CompiledCModule::from_func(f, testing::vector_c_options()).run(pb.data());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(compare_outputs(b[i], a[i], 1e-4, 1e-5), "") << f.args[i].name;
}

TEST(CTunedSchedules, TunedGemm1024) { expect_vector_c_matches_jit(lowered_schedule("matmul_1024_tuned_packed.json")); }

TEST(CTunedSchedules, HandWrittenGemm1024) { expect_vector_c_matches_jit(lowered_schedule("matmul_1024_tiled.json")); }

TEST(CTunedSchedules, Conv2dBiasReluRegisterTile) {
  expect_vector_c_matches_jit(lowered_schedule("conv2d_bias_relu_fused.json"));
}

}  // namespace
}  // namespace loom
