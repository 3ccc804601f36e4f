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

TEST(CudaDevice, SuiteWorkloadsMatchTheReference) {
  REQUIRE_DEVICE(dev);
  std::printf("  device: %s (sm_%d)\n", dev->name().c_str(), dev->compute_capability());
  const int n = testing::long_tests() ? 24 : 6;
  for (const WorkloadInfo& w : workload_registry()) {
    for (const State& s : testing::gpu_states(w.name, w.small_params, n, 31))
      EXPECT_EQ(run_on_device(*dev, s, 3), "") << w.name << ": " << s.steps_json().dump();
  }
}

TEST(CudaDevice, FullSizeMatmulMatchesTheReference) {
  REQUIRE_DEVICE(dev);
  for (const State& s : testing::gpu_states("matmul", {{"M", 256}, {"N", 256}, {"K", 256}}, 8, 7))
    EXPECT_EQ(run_on_device(*dev, s, 5), "") << s.steps_json().dump();
}

}  // namespace
}  // namespace loom
