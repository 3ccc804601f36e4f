// Cross-thread reduction on GPU (sketch/gpu/cross_thread_reduction.cc),
// checked without a GPU: which stages get the sketch and how its loops are
// bound, the thread counts the annotation draws, replay from JSON, and that
// every sampled cross-thread state computes the reference when its loop
// nest runs serially (C backend).
#include <gtest/gtest.h>

#include <set>

#include "ir/lower.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

using testing::has_cross_thread_reduction;

const Iterator& leaf(const State& s, const std::string& stage, int pos) {
  const Stage& st = s.stage(s.stage_index(stage));
  return st.iters[st.leaves.at(pos)];
}

// The sketch whose named stages all reduce across threads.
const State* sketch_with_cross_thread(const std::vector<State>& sketches, const std::vector<std::string>& stages) {
  for (const State& s : sketches) {
    bool all = true;
    for (const auto& name : stages) {
      const Stage& st = s.stage(s.stage_index(name));
      bool any = false;
      for (int id : st.leaves)
        any |= st.iters[id].kind == IterKind::kReduce && st.iters[id].annotation == IterAnnotation::kThreadX;
      all &= any;
    }
    if (all) return &s;
  }
  return nullptr;
}

TEST(GpuCrossThreadSketch, NormSumOfSquaresIsReducedByTheThreadsOfOneBlock) {
  auto sketches = generate_sketches(testing::gpu_task("norm", {{"M", 1024}, {"N", 1024}}));
  ASSERT_EQ(sketches.size(), 2u);  // cross-thread, and the plain one-thread sketch (the rule is kApply)
  const State* s = sketch_with_cross_thread(sketches, {"sumsq"});
  ASSERT_NE(s, nullptr);
  const Stage& sumsq = s->stage(s->stage_index("sumsq"));
  EXPECT_EQ(sumsq.compute_at, ComputeAtKind::kIter);  // at norm's block loop
  EXPECT_EQ(sumsq.attach_stage, s->stage_index("norm"));
  ASSERT_EQ(sumsq.leaves.size(), 3u);  // i, r.1 (threads), r.0 (each thread's share)
  EXPECT_EQ(leaf(*s, "sumsq", 1).annotation, IterAnnotation::kThreadX);
  EXPECT_EQ(leaf(*s, "sumsq", 1).kind, IterKind::kReduce);
  EXPECT_EQ(leaf(*s, "sumsq", 2).annotation, IterAnnotation::kNone);
  EXPECT_EQ(leaf(*s, "sumsq", 1).extent * leaf(*s, "sumsq", 2).extent, 1024 * 1024);  // ri, rj fused
  EXPECT_EQ(leaf(*s, "norm", 0).annotation, IterAnnotation::kBlockX);
}

TEST(GpuCrossThreadSketch, SoftmaxRowReductionsRunOneBlockPerRow) {
  auto sketches = generate_sketches(testing::gpu_task("softmax", {{"M", 512}, {"N", 1024}}));
  ASSERT_EQ(sketches.size(), 4u);  // each of maxelem, expsum: cross-thread or not
  const State* s = sketch_with_cross_thread(sketches, {"maxelem", "expsum"});
  ASSERT_NE(s, nullptr);
  // expsum at softmax's row loop (blockIdx.x); softmax's row split by the
  // same thread count (j.1 threadIdx.x); maxelem likewise at expv.
  for (auto [red, consumer] : {std::pair{"expsum", "softmax"}, std::pair{"maxelem", "expv"}}) {
    const Stage& r = s->stage(s->stage_index(red));
    EXPECT_EQ(r.compute_at, ComputeAtKind::kIter) << red;
    EXPECT_EQ(r.attach_stage, s->stage_index(consumer)) << red;
    EXPECT_EQ(leaf(*s, red, 1).annotation, IterAnnotation::kThreadX) << red;
    const Stage& c = s->stage(s->stage_index(consumer));
    ASSERT_EQ(c.leaves.size(), 3u) << consumer;
    EXPECT_EQ(leaf(*s, consumer, 0).annotation, IterAnnotation::kBlockX) << consumer;
    EXPECT_EQ(leaf(*s, consumer, 0).extent, 512) << consumer;
    EXPECT_EQ(leaf(*s, consumer, 2).annotation, IterAnnotation::kThreadX) << consumer;
    EXPECT_EQ(leaf(*s, consumer, 2).extent, leaf(*s, red, 1).extent) << consumer;
  }
}

TEST(GpuCrossThreadSketch, OnlyMatmulsWithSmallOutputsAndLongReductionsGetIt) {
  auto small = generate_sketches(testing::gpu_task("matmul", {{"M", 4}, {"N", 4}, {"K", 4096}}));
  ASSERT_EQ(small.size(), 2u);  // cross-thread, and cache-write + multi-level tiling
  const State* s = sketch_with_cross_thread(small, {"C"});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(leaf(*s, "C", 0).annotation, IterAnnotation::kBlockX);  // i, j fused: one block per element
  EXPECT_EQ(leaf(*s, "C", 0).extent, 16);
  EXPECT_EQ(leaf(*s, "C", 1).annotation, IterAnnotation::kThreadX);
  for (const State& big : generate_sketches(testing::gpu_task("matmul", {{"M", 512}, {"N", 512}, {"K", 512}})))
    EXPECT_FALSE(has_cross_thread_reduction(big));
}

TEST(GpuCrossThreadSketch, ReductionsShorterThanAWarpKeepOneThreadPerOutput) {
  auto sketches = generate_sketches(testing::gpu_task("softmax", {{"M", 5}, {"N", 13}}));
  ASSERT_EQ(sketches.size(), 1u);
  EXPECT_FALSE(has_cross_thread_reduction(sketches[0]));
}

TEST(GpuCrossThreadAnnotation, ThreadCountsArePowersOfTwoUpToTheReduceExtent) {
  std::set<int64_t> seen;
  for (const State& s : testing::cross_thread_states("norm", {{"M", 1024}, {"N", 1024}}, 24, 3)) {
    const int64_t t = leaf(s, "sumsq", 1).extent;
    EXPECT_TRUE(t >= 32 && t <= 1024 && (t & (t - 1)) == 0) << t;
    seen.insert(t);
  }
  EXPECT_GE(seen.size(), 3u);
  for (const State& s : testing::cross_thread_states("norm", {{"M", 7}, {"N", 9}}, 4, 3))
    EXPECT_EQ(leaf(s, "sumsq", 1).extent, 32);  // 63 elements: one warp
  for (const State& s : testing::cross_thread_states("softmax", {{"M", 8}, {"N", 200}}, 8, 3))
    if (leaf(s, "expsum", 1).annotation == IterAnnotation::kThreadX) EXPECT_LE(leaf(s, "expsum", 1).extent, 128);
}

TEST(GpuCrossThreadAnnotation, StatesReplayFromTheirJson) {
  auto states = testing::cross_thread_states("softmax", {{"M", 64}, {"N", 1000}}, 8, 5);
  ASSERT_FALSE(states.empty());
  for (const State& s : states) {
    State again = State::from_json(s.dag_ptr(), nlohmann::json::parse(s.steps_json().dump()));
    EXPECT_EQ(again.fingerprint(), s.fingerprint());
    EXPECT_EQ(to_string(lower(again)), to_string(lower(s)));
  }
}

void check_compute_the_reference_serially(int n) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"norm", {{"M", 7}, {"N", 9}}},
      {"norm", {{"M", 37}, {"N", 53}}},
      {"softmax", {{"M", 5}, {"N", 100}}},
      {"softmax", {{"M", 3}, {"N", 1000}}},
      {"matmul", {{"M", 4}, {"N", 4}, {"K", 4096}}},
      {"dense_bias_relu", {{"M", 2}, {"N", 3}, {"K", 300}}},
  };
  for (const auto& [w, params] : cases) {
    auto states = testing::cross_thread_states(w, params, n, 11);
    ASSERT_FALSE(states.empty()) << w << " " << params.dump();
    for (const State& s : states)
      EXPECT_EQ(testing::check_with_c_backend(s), "") << w << " " << params.dump() << ": " << s.steps_json().dump();
  }
}

TEST(GpuCrossThreadStates, ComputeTheReferenceSerially) { check_compute_the_reference_serially(4); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_GpuCrossThreadStatesLong, ComputeTheReferenceSerially) { check_compute_the_reference_serially(12); }

TEST(GpuCrossThreadStates, AnyThreadCountComputesTheReferenceSerially) {
  // A tile-size mutation may leave a count that is not a power of two.
  State s = testing::cross_thread_states("softmax", {{"M", 3}, {"N", 1000}}, 1, 2).at(0);
  for (int64_t t : {7, 100, 1000}) {
    State odd = testing::with_thread_count(s, t);
    EXPECT_EQ(testing::check_with_c_backend(odd), "") << t << ": " << odd.steps_json().dump();
  }
}

TEST(GpuCrossThreadStates, MinReductionWithAScalarPerBlockConsumer) {
  SketchPolicy p(testing::min_reduce_task(6, 500));
  std::mt19937_64 rng(4);
  int checked = 0;
  for (const State& s : p.sample(16, rng)) {
    if (!has_cross_thread_reduction(s)) continue;
    EXPECT_EQ(s.stage(s.stage_index("mn")).attach_stage, s.stage_index("out"));
    EXPECT_EQ(testing::check_with_c_backend(s), "") << s.steps_json().dump();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace loom
