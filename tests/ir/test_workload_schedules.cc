// Every registered workload computes the reference result under its
// unscheduled state and under a split/reorder/compute_at/cache_write schedule;
// bound inference gives compute_at stages exactly the region they need.
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/lower.h"
#include "ir/workload_registry.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

std::shared_ptr<const ComputeDAG> small_dag(const WorkloadInfo& w) {
  return std::make_shared<const ComputeDAG>(make_workload(w.name, w.small_params));
}

// The stage doing most of the work: the reduction with the most FLOPs, else
// the last stage.
int main_stage(const State& s) {
  int best = -1;
  double best_flops = -1;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (st.op->is_placeholder || st.op->reduce_axes.empty()) continue;
    double f = op_flop_count(*st.op);
    if (f > best_flops) best = static_cast<int>(i), best_flops = f;
  }
  return best >= 0 ? best : static_cast<int>(s.stages().size()) - 1;
}

// Splits every spatial loop of `stage` by 2 or 3 (so some splits are not
// divisible), then moves all outer parts outside all inner parts.
State tile_spatial(State s, int stage) {
  size_t n_axes = s.stage(stage).op->axes.size();
  for (size_t d = 0; d < n_axes; ++d) {
    int pos = static_cast<int>(2 * d);
    int64_t e = s.stage(stage).iters[s.stage(stage).leaves[pos]].extent;
    int64_t f = e >= 3 ? (d % 2 ? 2 : 3) : 1;
    s = s.split(stage, pos, {f});
  }
  std::vector<int> order;
  size_t n = s.stage(stage).leaves.size();
  for (size_t d = 0; d < n_axes; ++d) order.push_back(static_cast<int>(2 * d));
  for (size_t d = 0; d < n_axes; ++d) order.push_back(static_cast<int>(2 * d + 1));
  for (size_t k = 2 * n_axes; k < n; ++k) order.push_back(static_cast<int>(k));
  return s.reorder(stage, order);
}

State generic_schedule(State s) {
  int m = main_stage(s);
  const std::string main_name = s.stage(m).name();
  bool is_output = s.dag().is_output(main_name);
  s = s.cache_write(m, BufferScope::kLocal);  // main_local at m, main at m+1
  int local = m;
  m += 1;
  size_t n_axes = s.stage(m).op->axes.size();
  s = tile_spatial(s, m);
  s = s.compute_at(local, m, static_cast<int>(n_axes) - 1);
  if (!is_output) {
    // Fuse into the consumer: tile it and compute the main stage at its tile.
    auto consumers = effective_consumers(s, m);
    if (consumers.size() == 1 && s.stage(consumers[0]).op->reduce_axes.empty()) {
      int c = consumers[0];
      s = tile_spatial(s, c);
      s = s.compute_at(m, c, static_cast<int>(s.stage(c).op->axes.size()) - 1);
    }
  }
  return s;
}

class EveryWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryWorkload, UnscheduledMatchesReference) {
  auto dag = small_dag(*find_workload(GetParam()));
  EXPECT_EQ(testing::check_with_c_backend(State::initial(dag)), "");
}

TEST_P(EveryWorkload, TiledCacheWriteComputeAtScheduleMatchesReference) {
  auto dag = small_dag(*find_workload(GetParam()));
  State s = generic_schedule(State::initial(dag));
  EXPECT_EQ(testing::check_with_c_backend(s), "") << s.to_string();
}

std::vector<std::string> all_workloads() {
  std::vector<std::string> out;
  for (const auto& w : workload_registry()) out.push_back(w.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryWorkload, ::testing::ValuesIn(all_workloads()),
                         [](const auto& info) { return info.param; });

TEST(BoundInference, PadComputedAtConvTileGetsTileplusHalo) {
  auto dag = testing::workload(
      "conv2d", R"({"N":1,"C":3,"H":9,"W":9,"K":4,"R":3,"S":3,"stride":1,"pad":1,"dilation":1})");
  State s = State::initial(dag);
  int conv = s.stage_index("conv");
  int pad = s.stage_index("pad");
  // conv loops: n, k, h, w, rc, ry, rx -> n, k, h.0, w.0, h.1, w.1, rc, ry, rx
  s = s.split(conv, 2, {4}).split(conv, 4, {4}).reorder(conv, {0, 1, 2, 4, 3, 5, 6, 7, 8});
  s = s.compute_at(pad, conv, 3);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("pad");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 3, 6, 6})) << to_string(f);
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(BoundInference, StridedConvHaloScalesWithStride) {
  auto dag = testing::workload(
      "conv2d", R"({"N":1,"C":2,"H":11,"W":11,"K":2,"R":3,"S":3,"stride":2,"pad":1,"dilation":1})");
  State s = State::initial(dag);
  int conv = s.stage_index("conv");
  s = s.split(conv, 2, {2}).split(conv, 4, {3}).reorder(conv, {0, 1, 2, 4, 3, 5, 6, 7, 8});
  s = s.compute_at(s.stage_index("pad"), conv, 3);
  LoweredFunc f = lower(s);
  // 2 rows of output at stride 2 need (2-1)*2 + 3 = 5 rows; 3 columns need 7.
  EXPECT_EQ(f.find_buffer("pad")->shape, (std::vector<int64_t>{1, 2, 5, 7})) << to_string(f);
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(BoundInference, ProducerAtInnerLoopGetsOneElementRegion) {
  auto dag = testing::workload("dense_bias_relu", R"({"M":5,"N":7,"K":3})");
  State s = State::initial(dag);
  int relu = s.stage_index("relu");
  s = s.compute_at(s.stage_index("dense"), relu, 1);
  EXPECT_EQ(lower(s).find_buffer("dense")->shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(BoundInference, ConsumerOutsideAttachLoopIsAnError) {
  // dense at relu's inner loop, then relu's loops reordered is fine; but a
  // producer attached deeper than a consumer that reads it is rejected.
  auto dag = testing::workload("softmax", R"({"M":4,"N":6})");
  State s = State::initial(dag);
  int out = static_cast<int>(s.stages().size()) - 1;
  int expsum = s.stage_index("expsum");
  int expv = s.stage_index("expv");
  // expv is read by expsum and softmax; compute expsum at softmax's row loop
  // and expv at expsum's inner loop: softmax (outside expsum's loop) also
  // reads expv -> compute_at must refuse.
  s = s.compute_at(expsum, out, 0);
  EXPECT_THROW(s.compute_at(expv, expsum, 1), LoomError);
}

}  // namespace
}  // namespace loom
