// GPU-only tests: random GPU states of every suite workload (small
// parameters) run on the device and match the reference evaluator. Skipped
// with a message when there is no CUDA toolkit, no driver or no device.
#include <gtest/gtest.h>

#include "codegen/cuda/cuda_runner.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "tests/gpu/gpu_test_util.h"

namespace loom {
namespace {

CudaDevice* device_or_skip_reason(std::string* why) {
  if (!nvrtc_available()) {
    *why = "no CUDA toolkit in this build (NVRTC)";
    return nullptr;
  }
  return CudaDevice::open(why);
}

#define REQUIRE_DEVICE(dev)                       \
  std::string why_;                               \
  CudaDevice* dev = device_or_skip_reason(&why_); \
  if (!dev) GTEST_SKIP() << why_

// "" when the state's CUDA module computes the reference outputs.
std::string run_on_device(CudaDevice& dev, const State& s, uint64_t seed) {
  const ComputeDAG& dag = s.dag();
  LoweredFunc f = lower(s);
  CudaModuleSource m = emit_cuda_source(f);
  std::string ptx = compile_cuda_to_ptx(m.source, "sm_" + std::to_string(dev.compute_capability()));
  auto inputs = random_inputs(dag, seed);
  auto ref = evaluate_reference(dag, inputs);
  CudaModuleRunner r(dev, m, ptx);
  for (const auto& n : dag.input_names()) r.write(n, inputs.at(n));
  for (const auto& n : dag.output_names()) r.fill_nan(n);
  r.run();
  for (const auto& n : dag.output_names()) {
    std::string d = compare_outputs(r.read(n), ref.at(n));
    if (!d.empty()) return n + ": " + d;
  }
  return "";
}

void check_suite_workloads_match_the_reference(int n) {
  REQUIRE_DEVICE(dev);
  std::printf("  device: %s (sm_%d)\n", dev->name().c_str(), dev->compute_capability());
  for (const WorkloadInfo& w : workload_registry()) {
    for (const State& s : testing::gpu_states(w.name, w.small_params, n, 31))
      EXPECT_EQ(run_on_device(*dev, s, 3), "") << w.name << ": " << s.steps_json().dump();
  }
}

TEST(CudaDevice, SuiteWorkloadsMatchTheReference) { check_suite_workloads_match_the_reference(6); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_CudaDeviceLong, SuiteWorkloadsMatchTheReference) { check_suite_workloads_match_the_reference(24); }

// Cross-thread reductions (block allreduce): sum, max and min, fused with
// their consumer or not, thread counts from the annotation and odd ones (a
// partial last warp, fewer threads than a warp).
void check_cross_thread_reductions_match_the_reference(int n) {
  REQUIRE_DEVICE(dev);
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"norm", {{"M", 37}, {"N", 53}}},          {"norm", {{"M", 1024}, {"N", 1024}}},
      {"softmax", {{"M", 5}, {"N", 300}}},        {"softmax", {{"M", 64}, {"N", 1000}}},
      {"matmul", {{"M", 4}, {"N", 4}, {"K", 4096}}}, {"dense_bias_relu", {{"M", 2}, {"N", 8}, {"K", 4096}}},
  };
  for (const auto& [w, params] : cases) {
    auto states = testing::cross_thread_states(w, params, n, 13);
    EXPECT_FALSE(states.empty()) << w;
    for (const State& s : states)
      EXPECT_EQ(run_on_device(*dev, s, 3), "") << w << " " << params.dump() << ": " << s.steps_json().dump();
    if (states.empty()) continue;
    for (int64_t t : {100, 1000, 7}) {
      State odd = testing::with_thread_count(states[0], t);
      EXPECT_EQ(run_on_device(*dev, odd, 4), "") << w << " " << t << " threads: " << odd.steps_json().dump();
    }
  }
  for (const State& s : testing::cross_thread_states(testing::min_reduce_task(6, 500), n, 13))
    EXPECT_EQ(run_on_device(*dev, s, 3), "") << "min: " << s.steps_json().dump();
}

TEST(CudaDevice, CrossThreadReductionsMatchTheReference) { check_cross_thread_reductions_match_the_reference(4); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_CudaDeviceLong, CrossThreadReductionsMatchTheReference) { check_cross_thread_reductions_match_the_reference(12); }

TEST(CudaDevice, FullSizeMatmulMatchesTheReference) {
  REQUIRE_DEVICE(dev);
  for (const State& s : testing::gpu_states("matmul", {{"M", 256}, {"N", 256}, {"K", 256}}, 8, 7))
    EXPECT_EQ(run_on_device(*dev, s, 5), "") << s.steps_json().dump();
}

}  // namespace
}  // namespace loom
