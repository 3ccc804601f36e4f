// Every step kind: a functional test (state change + lowered program still
// matches the reference) and a JSON round-trip test; plus replay identity and
// invalid-step errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/lower.h"
#include "ir/step.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

using testing::check_with_c_backend;
using testing::workload;

std::shared_ptr<const ComputeDAG> small_matmul() { return workload("matmul", R"({"M":12,"N":20,"K":10})"); }

std::vector<int64_t> leaf_extents(const State& s, int stage) {
  std::vector<int64_t> out;
  for (int id : s.stage(stage).leaves) out.push_back(s.stage(stage).iters[id].extent);
  return out;
}

// Serializes the last step, parses it back, and checks replaying the parsed
// history gives the same state.
void expect_round_trip(const State& s) {
  nlohmann::json j = s.steps_json();
  std::string text = j.dump();
  State back = State::from_json(s.dag_ptr(), nlohmann::json::parse(text));
  EXPECT_EQ(back.steps_json().dump(), text);
  EXPECT_EQ(back.fingerprint(), s.fingerprint());
}

TEST(SplitStep, SplitsIntoOuterAndGivenLengths) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 1, {4, 2});
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{12, 3, 4, 2, 10}));
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(SplitStep, NonDivisibleSplitIsGuarded) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 0, {5}).split(c, 3, {3});
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{3, 5, 20, 4, 3}));
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(SplitStep, NpartsSplitPutsLengthsOutside) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 0, {3}, /*inner_to_outer=*/false);
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{3, 4, 20, 10}));
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(SplitStep, RoundTrips) {
  State s = State::initial(small_matmul());
  s = s.split(s.stage_index("C"), 1, {4, 5});
  EXPECT_EQ(s.steps_json().dump(), R"([["SP",2,1,20,[4,5],1]])");
  expect_round_trip(s);
}

TEST(FollowSplitStep, CopiesLengthsOfSourceSplit) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 1, {2, 5});           // j -> 2, 2, 5
  s = s.follow_split(c, 0, 0, 2);     // i (12) -> 12/10, 2, 5*... lengths [2, 5]
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{2, 2, 5, 2, 2, 5, 10}));
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(FollowSplitStep, MergesInnerLengthsWhenFewerSplits) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 1, {2, 5});
  s = s.follow_split(c, 0, 0, 1);     // one length: 2*5 = 10
  EXPECT_EQ(leaf_extents(s, c)[0], 2);
  EXPECT_EQ(leaf_extents(s, c)[1], 10);
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(FollowFusedSplitStep, MultipliesLevelLengths) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 0, {2, 3});  // step 0: i -> 2, 2, 3
  s = s.split(c, 3, {5});     // step 1: j -> 4, 5
  s = s.follow_fused_split(c, 5, {0, 1}, 0, true);  // k (10) by 2*5 = 10
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{2, 2, 3, 4, 5, 1, 10}));
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(FuseStep, FusesConsecutiveLoops) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.fuse(c, {0, 1});
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{240, 10}));
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(FuseStep, FuseThenSplitFoldsIndexMath) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.fuse(c, {0, 1}).split(c, 0, {20});  // fused 240 -> 12 x 20: i and j come back exactly
  std::string text = to_string(lower(s));
  EXPECT_EQ(text.find('%'), std::string::npos) << text;
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(ReorderStep, PermutesLoops) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.reorder(c, {2, 0, 1});
  EXPECT_EQ(leaf_extents(s, c), (std::vector<int64_t>{10, 12, 20}));
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(AnnotationStep, SetsLoopKind) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.split(c, 1, {4}).annotate(c, 0, IterAnnotation::kParallel).annotate(c, 2, IterAnnotation::kVectorize);
  const Stage& st = s.stage(c);
  EXPECT_EQ(st.iters[st.leaves[0]].annotation, IterAnnotation::kParallel);
  std::string text = to_string(lower(s));
  EXPECT_NE(text.find("parallel for"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorize for"), std::string::npos) << text;
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(PragmaStep, SetsAutoUnrollOnLoop) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.pragma(c, 0, "auto_unroll_max_step$16");
  EXPECT_EQ(s.stage(c).auto_unroll_max_step, 16);
  EXPECT_NE(to_string(lower(s)).find("auto_unroll_max_step=16"), std::string::npos);
  expect_round_trip(s);
}

TEST(ComputeInlineStep, InlinesElementwiseProducer) {
  auto dag = workload("conv2d", R"({"N":1,"C":3,"H":7,"W":7,"K":4,"R":3,"S":3,"stride":1,"pad":1,"dilation":1})");
  State s = State::initial(dag);
  int pad = s.stage_index("pad");
  s = s.compute_inline(pad);
  EXPECT_EQ(s.stage(pad).compute_at, ComputeAtKind::kInlined);
  LoweredFunc f = lower(s);
  EXPECT_EQ(f.find_buffer("pad"), nullptr);  // no buffer for an inlined stage
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(ComputeAtStep, ComputesProducerInsideConsumerLoop) {
  auto dag = workload("dense_bias_relu", R"({"M":8,"N":12,"K":6})");
  State s = State::initial(dag);
  int out = s.stage_index("relu");
  int dense = s.stage_index("dense");
  s = s.split(out, 1, {4});
  s = s.compute_at(dense, out, 1);
  EXPECT_EQ(s.stage(dense).compute_at, ComputeAtKind::kIter);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer(s.stage(dense).name());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 4})) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(ComputeRootStep, UndoesComputeAt) {
  auto dag = workload("dense_bias_relu", R"({"M":8,"N":12,"K":6})");
  State s = State::initial(dag);
  int out = s.stage_index("relu");
  int dense = s.stage_index("dense");
  s = s.compute_at(dense, out, 0).compute_root(dense);
  EXPECT_EQ(s.stage(dense).compute_at, ComputeAtKind::kRoot);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(CacheWriteStep, ComputesIntoLocalStageAttachedToTile) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.cache_write(c, BufferScope::kLocal);  // C_local inserted at c, C at c+1
  ASSERT_EQ(s.stage(c).name(), "C_local");
  s = s.split(c + 1, 0, {4}).split(c + 1, 2, {5}).reorder(c + 1, {0, 2, 1, 3});
  s = s.compute_at(c, c + 1, 1);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("C_local");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{4, 5})) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(CacheReadStep, CopiesInputForReaders) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  int a = s.stage_index("A");
  s = s.cache_read(a, BufferScope::kLocal, {c});
  int cache = s.stage_index("A_local");
  ASSERT_EQ(cache, a + 1);
  c = s.stage_index("C");
  s = s.split(c, 0, {3}).compute_at(cache, c, 0);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("A_local");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{3, 10})) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(StorageLayoutStep, StoresDimensionsInTheGivenOrder) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.cache_write(c, BufferScope::kLocal);  // C_local[i, j] stored as [j, i]
  s = s.storage_layout(c, {1, 0});
  s = s.split(c + 1, 0, {4}).split(c + 1, 2, {5}).reorder(c + 1, {0, 2, 1, 3});
  s = s.compute_at(c, c + 1, 1);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("C_local");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{5, 4})) << to_string(f);
  // Consecutive i are one float apart, consecutive j a column (4) apart.
  EXPECT_NE(to_string(f).find("C_local[((j*4) + i)] = 0.0f"), std::string::npos) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(StorageLayoutStep, TransposesAPackedInput) {
  State s = State::initial(small_matmul());
  s = s.cache_read(s.stage_index("A"), BufferScope::kLocal, {s.stage_index("C")});
  s = s.storage_layout(s.stage_index("A_local"), {1, 0});  // A_local[k, i]
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("A_local");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{10, 12})) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(StorageLayoutStep, IdentityIsNoLayout) {
  State s = State::initial(small_matmul());
  s = s.cache_read(s.stage_index("A"), BufferScope::kLocal, {s.stage_index("C")});
  const int a = s.stage_index("A_local");
  EXPECT_EQ(s.storage_layout(a, {0, 1}).stage(a).storage_order, std::vector<int>{});
  EXPECT_EQ(s.storage_layout(a, {1, 0}).stage(a).innermost_storage_dim(), 0);
}

std::shared_ptr<const ComputeDAG> small_pointwise_conv() {
  return workload("conv2d", R"({"N":1,"C":3,"H":3,"W":5,"K":4,"R":1,"S":1,"stride":1,"pad":0})");
}

// A 1x1 conv's local accumulator with its 3 x 5 map as one dimension of 15,
// tiled by 4 along it: each tile is one range of 4 pixels (crossing rows),
// and no address divides by the width.
TEST(FuseDimsStep, MakesTwoDimensionsOneThatTilesAcrossRows) {
  State s = State::initial(small_pointwise_conv());
  const int c = s.stage_index("conv");
  s = s.cache_write(c, BufferScope::kLocal).fuse_dims(c, 2);  // conv_local[n, k, h * 5 + w]
  EXPECT_EQ(s.stage(c).op->shape, (std::vector<int64_t>{1, 4, 15}));
  s = s.fuse(c + 1, {2, 3}).split(c + 1, 2, {4}).compute_at(c, c + 1, 2);
  LoweredFunc f = lower(s);
  const Buffer* b = f.find_buffer("conv_local");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 1, 4})) << to_string(f);
  EXPECT_EQ(to_string(f).find('%'), std::string::npos) << to_string(f);
  EXPECT_EQ(to_string(f).find('/'), std::string::npos) << to_string(f);
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(FuseDimsStep, ReadersIndexTheFusedDimension) {
  State s = State::initial(small_pointwise_conv());
  const int c = s.stage_index("conv");
  s = s.cache_write(c, BufferScope::kLocal).fuse_dims(c, 1);  // conv_local[n, k * 3 + h, w]
  EXPECT_EQ(s.stage(c).op->shape, (std::vector<int64_t>{1, 12, 5}));
  EXPECT_NE(to_string(s.stage(c + 1).op->body).find("conv_local"), std::string::npos);
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(RfactorStep, FactorsSplitReduction) {
  auto dag = workload("matmul", R"({"M":2,"N":3,"K":37})");
  State s = State::initial(dag);
  int c = s.stage_index("C");
  s = s.split(c, 2, {4});        // k -> 10, 4 (non-divisible)
  s = s.rfactor(c, 3, 2);        // C_rf[i, j, ki]
  int rf = s.stage_index("C_rf");
  ASSERT_GE(rf, 0);
  EXPECT_EQ(s.stage(rf).op->shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(check_with_c_backend(s), "");
  expect_round_trip(s);
}

TEST(Replay, GivesIdenticalStateAndCode) {
  State s = State::initial(small_matmul());
  int c = s.stage_index("C");
  s = s.cache_write(c, BufferScope::kLocal);
  s = s.split(c + 1, 0, {4}).split(c + 1, 2, {5}).reorder(c + 1, {0, 2, 1, 3});
  s = s.compute_at(c, c + 1, 1).annotate(c + 1, 0, IterAnnotation::kParallel);
  State r = State::replay(s.dag_ptr(), s.steps());
  EXPECT_EQ(r.fingerprint(), s.fingerprint());
  EXPECT_EQ(to_string(lower(r)), to_string(lower(s)));
}

TEST(Registry, KnowsEveryStepKind) {
  auto tags = registered_step_tags();
  for (const char* t : {"SP", "FSP", "FFSP", "FU", "RE", "AN", "PR", "CA", "CI", "CR", "CHR", "CHW", "RF", "SL", "LR", "FD"})
    EXPECT_NE(std::find(tags.begin(), tags.end(), t), tags.end()) << t;
}

// ---- invalid steps: a clear error, and the state is unchanged ----------

void expect_invalid(const State& s, const std::string& step_json, const std::string& needle) {
  std::string before = s.fingerprint();
  try {
    s.apply(step_from_json(nlohmann::json::parse(step_json)));
    FAIL() << "accepted " << step_json;
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "multi-line error";
  }
  EXPECT_EQ(s.fingerprint(), before);
}

TEST(InvalidStep, UnknownStage) { expect_invalid(State::initial(small_matmul()), R"(["SP",9,0,12,[2],1])", "stage 9 out of range"); }
TEST(InvalidStep, UnknownIterator) { expect_invalid(State::initial(small_matmul()), R"(["AN",2,5,"parallel"])", "iterator 5 out of range"); }
TEST(InvalidStep, ReorderNotAPermutation) { expect_invalid(State::initial(small_matmul()), R"(["RE",2,[0,0,1]])", "not a permutation"); }
TEST(InvalidStep, InliningAnOutput) { expect_invalid(State::initial(small_matmul()), R"(["CI",2])", "output"); }
TEST(InvalidStep, SplitLengthsDoNotFit) { expect_invalid(State::initial(small_matmul()), R"(["SP",2,0,12,[5,3],1])", "do not fit"); }
TEST(InvalidStep, SplitExtentMismatch) { expect_invalid(State::initial(small_matmul()), R"(["SP",2,0,13,[2],1])", "does not match"); }
TEST(InvalidStep, ParallelReduceLoop) { expect_invalid(State::initial(small_matmul()), R"(["AN",2,2,"parallel"])", "reduce iterator"); }
TEST(InvalidStep, UnknownTag) { expect_invalid(State::initial(small_matmul()), R"(["XX",2])", "unknown step tag"); }
TEST(InvalidStep, MalformedFields) { expect_invalid(State::initial(small_matmul()), R"(["SP","two",0,12,[2],1])", "SP stage"); }
TEST(InvalidStep, LayoutOfAnOutput) { expect_invalid(State::initial(small_matmul()), R"(["SL",2,[1,0]])", "output C"); }
TEST(InvalidStep, LayoutOfAnInput) { expect_invalid(State::initial(small_matmul()), R"(["SL",0,[1,0]])", "input A"); }
TEST(InvalidStep, LayoutNotAPermutation) {
  State s = State::initial(small_matmul());
  s = s.cache_read(s.stage_index("A"), BufferScope::kLocal, {s.stage_index("C")});
  expect_invalid(s, R"(["SL",1,[1,1]])", "not a permutation");
}
TEST(InvalidStep, FuseDimsOfAnOutput) { expect_invalid(State::initial(small_matmul()), R"(["FD",2,0])", "output C"); }
TEST(InvalidStep, FuseDimsOfAnInput) { expect_invalid(State::initial(small_matmul()), R"(["FD",0,0])", "input A"); }
TEST(InvalidStep, FuseDimsPastTheLastDimension) {
  State s = State::initial(small_matmul()).cache_write(2, BufferScope::kLocal);
  expect_invalid(s, R"(["FD",2,1])", "needs dimensions 1 and 2");
}
TEST(InvalidStep, FuseDimsAfterASplit) {
  State s = State::initial(small_matmul()).cache_write(2, BufferScope::kLocal).split(2, 0, {4});
  expect_invalid(s, R"(["FD",2,0])", "must come before");
}
TEST(InvalidStep, ComputeAtNonAncestor) {
  auto dag = workload("softmax", R"({"M":4,"N":6})");
  State s = State::initial(dag);
  // The first stage after the input feeds later stages; computing it at the
  // input placeholder (no loops) or at a non-consumer is invalid.
  int first = 1;
  int last = static_cast<int>(s.stages().size()) - 1;
  std::string step = "[\"CA\"," + std::to_string(first) + "," + std::to_string(last) + ",0]";
  // Softmax's max stage is read by stages other than the output's nest.
  expect_invalid(s, step, "not an ancestor");
}

}  // namespace
}  // namespace loom
