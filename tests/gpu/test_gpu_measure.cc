// The tuner's measurement path for a cuda target (worker processes): with a
// GPU, random GPU states are measured and correct; without one, every
// candidate is a run_error saying "no GPU device" — the tuner carries on.
// A schedule the GPU cannot run is an invalid_schedule either way.
#include <gtest/gtest.h>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc.h"
#include "measure/measurer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/measure/measure_test_util.h"

namespace loom {
namespace {

// The measurement tests' fast options, with time for NVRTC builds and a
// device's first launch, and the default memory limit (a CUDA context
// reserves far more address space than the CPU tests' 2 GB cap).
MeasureOptions fast_options() {
  MeasureOptions o = measure_test::fast_options();
  o.run_timeout_s = 5;
  o.build_timeout_s = 30;
  o.max_memory_mb = MeasureOptions{}.max_memory_mb;
  return o;
}

TEST(GpuMeasure, CudaTargetCandidates) {
  REQUIRE_NVRTC();
  Task task = Task::make("matmul", {{"M", 128}, {"N", 128}, {"K", 64}}, Target::parse("cuda -arch=sm_90"));
  auto states = testing::gpu_states("matmul", {{"M", 128}, {"N", 128}, {"K", 64}}, 4, 17);
  ASSERT_FALSE(states.empty());
  // Too many threads per block: invalid on any GPU.
  State bad = State::initial(task.dag);
  const int c = bad.stage_index("C");
  bad = bad.fuse(c, {0, 1});
  bad = bad.annotate(c, 0, IterAnnotation::kThreadX);
  states.push_back(bad);
  std::string why;
  const bool have_device = CudaDevice::open(&why) != nullptr;
  Measurer m(fast_options());
  auto results = m.measure(task, states);
  ASSERT_EQ(results.size(), states.size());
  for (size_t i = 0; i + 1 < results.size(); ++i) {
    if (have_device) {
      EXPECT_TRUE(results[i].ok()) << error_kind_name(results[i].error) << ": " << results[i].error_msg;
    } else {
      EXPECT_EQ(results[i].error, ErrorKind::kRunError) << results[i].error_msg;
      EXPECT_NE(results[i].error_msg.find("no GPU device"), std::string::npos) << results[i].error_msg;
    }
  }
  EXPECT_EQ(results.back().error, ErrorKind::kInvalidSchedule) << results.back().error_msg;
  if (!have_device) std::printf("  (no device: %s)\n", why.c_str());
}

}  // namespace
}  // namespace loom
