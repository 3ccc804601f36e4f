// GPU sketches and random GPU states, checked without a GPU: structure of
// the sketch, and every sampled state computes the reference result when
// its loop nest runs serially (C backend), which validates lowering of the
// GPU schedules (shared stages relaxed over threadIdx, register tiles).
#include <gtest/gtest.h>

#include "tests/gpu/gpu_test_util.h"
#include "ir/lower.h"
#include "ir/virtual_threads.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

TEST(GpuSketch, MatmulHasSharedCacheReadsAndThreadBinding) {
  auto sketches = generate_sketches(testing::gpu_task("matmul", {{"M", 512}, {"N", 512}, {"K", 512}}));
  ASSERT_EQ(sketches.size(), 1u);
  const State& s = sketches[0];
  EXPECT_GE(s.stage_index("A_shared"), 0);
  EXPECT_GE(s.stage_index("B_shared"), 0);
  EXPECT_GE(s.stage_index("C_local"), 0);
  const Stage& c = s.stage(s.stage_index("C"));
  ASSERT_GE(c.leaves.size(), 3u);
  EXPECT_EQ(c.iters[c.leaves[0]].annotation, IterAnnotation::kBlockX);
  EXPECT_EQ(c.iters[c.leaves[1]].annotation, IterAnnotation::kVThread);
  EXPECT_EQ(c.iters[c.leaves[2]].annotation, IterAnnotation::kThreadX);
  EXPECT_EQ(s.stage(s.stage_index("A_shared")).scope, BufferScope::kShared);
}

TEST(GpuSketch, SampledStatesRespectLimits) {
  for (const State& s : testing::gpu_states("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, 32, 5)) {
    LoweredFunc f = inject_virtual_threads(lower(s));  // as the GPU runs it
    int64_t shared = 0;
    for (const auto& t : f.temps)
      if (t.scope == BufferScope::kShared) shared += 4 * t.size();
    EXPECT_LE(shared, 48 * 1024) << s.steps_json().dump();
    visit_stmt(f.body, [&](const Stmt& x) {
      if (x->kind == StmtKind::kFor && x->for_kind == ForKind::kThreadX) EXPECT_LE(x->extent, 1024);
    });
  }
}

void check_sampled_states_compute_the_reference_serially(int n) {
  for (const WorkloadInfo& w : workload_registry()) {
    auto states = testing::gpu_states(w.name, w.small_params, n, 11);
    ASSERT_FALSE(states.empty()) << w.name;
    for (const State& s : states)
      EXPECT_EQ(testing::check_with_c_backend(s), "") << w.name << ": " << s.steps_json().dump();
  }
}

TEST(GpuSketch, SampledStatesComputeTheReferenceSerially) { check_sampled_states_compute_the_reference_serially(6); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_GpuSketchLong, SampledStatesComputeTheReferenceSerially) { check_sampled_states_compute_the_reference_serially(24); }

}  // namespace
}  // namespace loom
