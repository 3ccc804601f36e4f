// Sketch generation: which rules fire for which stages, and how many
// sketches each suite workload gets. The golden counts pin the rule set: a
// change that drops or adds a rule (or changes a condition) fails here.
#include <gtest/gtest.h>

#include <random>

#include "ir/lower.h"
#include "ir/steps.h"
#include "sketch/analysis.h"
#include "sketch/sketch_policy.h"
#include "tests/sketch/sketch_test_util.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

using testing::sketch_task;

size_t count_sketches(const std::string& workload, const nlohmann::json& params, int threads,
                      bool loom_rules = true) {
  SketchTask task = sketch_task(workload, params, threads);
  task.settings.pack_reused_inputs = loom_rules;
  task.settings.vector_axis_layouts = loom_rules;
  task.settings.fuse_contiguous_dims = loom_rules;
  task.settings.inline_broadcast_copies = loom_rules;
  return generate_sketches(task).size();
}

// Ansor's rule set: Loom's input packing, vector axis layouts,
// contiguous-dimension fusion and broadcast-copy inlining off.
size_t count_ansor_sketches(const std::string& workload, const nlohmann::json& params, int threads) {
  return count_sketches(workload, params, threads, false);
}

// Ansor's golden numbers (its CPU sketch-generation tests): 3 sketches for a
// 512^3 matmul (tiling; cache-write + tiling with fusion at 2 levels) and 5
// for 8x8x512 (2 more with rfactor). rfactor needs the spatial extent (64)
// to be at most 16 * cores, hence threads = 4 here.
TEST(SketchCount, Matmul512HasThreeSketchesLikeAnsor) {
  EXPECT_EQ(count_ansor_sketches("matmul", {{"M", 512}, {"N", 512}, {"K", 512}}, 4), 3u);
}

TEST(SketchCount, Matmul8x8x512HasFiveSketchesLikeAnsor) {
  EXPECT_EQ(count_ansor_sketches("matmul", {{"M", 8}, {"N", 8}, {"K", 512}}, 4), 5u);
}

TEST(SketchCount, Matmul8x8x512OnOneThreadHasNoRfactorSketch) {
  // 64 spatial points are more than 16 * 1 thread can use: no rfactor.
  EXPECT_EQ(count_ansor_sketches("matmul", {{"M", 8}, {"N", 8}, {"K", 512}}, 1), 3u);
}

// What Loom gets for every registry workload with its default parameters,
// one thread. Explanations: reusing stages (matmul, conv, TBG) get 3
// (tiling, or cache-write + fusion at 2 levels, or fusion with an
// element-wise consumer at 2 levels + plain tiling); padding, transposes and
// exp stages are not strictly inlineable so they add no alternatives; every
// plain reduction with a long reduce axis gets 3 (2 rfactor + as is), so
// softmax (two of them) gets 9 and norm 3. Input packing adds the packed
// variant of the sketches with a fusible stage where a reused input is
// indexed by exactly the innermost spatial axis: both fused sketches of
// matmul and batch matmul (B) and the capsule conv (its kernel), all 3 of
// dense+bias+ReLU (W, transposed). Not TBG's value_T: a transposing copy
// that already stores the vector axis last is its own packed tile. The vector axis
// layout adds, where the innermost axis does not
// fill vectors and the output channels do (the convs: widths 56, 28, 14; 64
// channels), the same sketches with channels innermost and the kernel
// packed channels-last: 2 more behind a cache write (conv2d, conv3d,
// dilated and transposed conv, and the grouped conv, whose 16 output
// channels per group read one input channel per vector: a broadcast), 3
// more for conv2d_bias_relu (fused with relu at 2 levels or tiled plainly).
// Not for depthwise convs, whose data would be gathered along the
// channels, nor for conv1d, whose output length (128) already fills vectors.
TEST(SketchCount, EveryRegistryWorkloadWithDefaultParams) {
  const std::map<std::string, size_t> expected = {
      {"batch_matmul", 5}, {"capsule_conv2d", 5}, {"conv1d", 3},
      {"conv2d", 5},       {"conv2d_bias_relu", 6}, {"conv3d", 5},
      {"dense_bias_relu", 6}, {"depthwise_conv2d", 3}, {"dilated_conv2d", 5},
      {"group_conv2d", 5}, {"matmul", 5},           {"norm", 3},
      {"softmax", 9},      {"tbg", 3},              {"transposed_conv2d", 5},
      // Each row reduction: plain, rfactored, rfactored the other way; the
      // output's broadcast reads of gamma and beta get multi-level tiling.
      {"layer_norm", 27},
  };
  for (const auto& w : workload_registry()) {
    auto it = expected.find(w.name);
    ASSERT_NE(it, expected.end()) << "new workload " << w.name << ": add its sketch count here";
    EXPECT_EQ(count_sketches(w.name, nlohmann::json::object(), 1), it->second) << w.name;
  }
  EXPECT_EQ(expected.size(), workload_registry().size());
}

// The sketches whose cache-write stage has its last two dimensions fused
// (an FD step), for a conv with the given kernel size and padding.
int fused_dim_sketches(int64_t kernel, int64_t pad, int64_t width) {
  SketchTask task = sketch_task("conv2d", {{"N", 1}, {"C", 64}, {"H", 56}, {"W", width}, {"K", 256},
                                           {"R", kernel}, {"S", kernel}, {"stride", 1}, {"pad", pad}});
  int n = 0;
  for (const State& s : generate_sketches(task)) {
    const int local = s.stage_index("conv_local");
    if (local >= 0 && s.stage(local).op->shape.size() == 3) ++n;
  }
  return n;
}

TEST(SketchRules, PointwiseConvIsAlsoTiledWithItsFeatureMapAsOneDimension) {
  // 56 columns: no whole vectors; 56 x 56 = 196 vectors. Fused with the
  // copy-out at 2 levels.
  EXPECT_EQ(fused_dim_sketches(1, 0, 56), 2);
}

TEST(SketchRules, PaddedConvKeepsItsRowsAndColumns) {
  // The 3x3 conv reads a 58-wide padded input at h + ry: its address would
  // divide by 56.
  EXPECT_EQ(fused_dim_sketches(3, 1, 56), 0);
}

TEST(SketchRules, ConvWhoseRowsFillVectorsKeepsThem) {
  EXPECT_EQ(fused_dim_sketches(1, 0, 64), 0);
}

TEST(SketchRules, PointwiseConvBeforeInlinedElementwiseStagesIsAlsoTiledOverItsPixels) {
  // A network's conv + bias add + residual add + ReLU: the adds are inlined
  // into the ReLU, the conv is fused into it with its 3 x 5 map as one
  // dimension, and every such program computes what the reference does.
  Tensor x = placeholder({1, 3, 3, 5}, "x"), w = placeholder({4, 3}, "w");
  Tensor bias = placeholder({4}, "bias"), residual = placeholder({1, 4, 3, 5}, "residual");
  Var c = reduce_axis(3, "c");
  Tensor conv = compute({1, 4, 3, 5}, [&](Var n, Var k, Var h, Var v) { return sum(x(n, c, h, v) * w(k, c), {c}); }, "conv");
  Tensor biased = compute({1, 4, 3, 5}, [&](Var n, Var k, Var h, Var v) { return conv(n, k, h, v) + bias(k); }, "biased");
  Tensor added = compute({1, 4, 3, 5}, [&](Var n, Var k, Var h, Var v) { return biased(n, k, h, v) + residual(n, k, h, v); }, "added");
  Tensor relu = compute({1, 4, 3, 5}, [&](Var n, Var k, Var h, Var v) { return max(added(n, k, h, v), Expr(0.0f)); }, "relu");
  SketchTask task;
  task.dag = std::make_shared<const ComputeDAG>(ComputeDAG({x, w, bias, residual}, {relu}));
  task.vector_width = 4;
  int fused = 0, packed = 0;
  for (const State& s : generate_sketches(task)) {
    if (s.stage(s.stage_index("conv")).op->shape.size() != 3) continue;
    ++fused;
    packed += s.stage_index("x_local") >= 0;
  }
  // Fused into the ReLU at 2 levels, each also with x packed.
  EXPECT_EQ(fused, 4);
  EXPECT_EQ(packed, 2);
  SketchPolicy policy(task);
  std::mt19937_64 rng(11);
  int checked = 0;
  for (const State& s : policy.sample(24, rng)) {
    if (s.stage(s.stage_index("conv")).op->shape.size() != 3) continue;
    ++checked;
    EXPECT_EQ(testing::check_with_c_backend(s), "") << s.steps_json().dump();
  }
  EXPECT_GT(checked, 0);
}

// Attention's masked scores: a matmul, then a select by a broadcast mask
// with a scalar fill. The scalar is not reuse, so the select stays
// element-wise and the matmul is fused into it; where the select reads two
// broadcast tensors it is tiled on its own and the matmul is not fused.
// Every sample computes what the reference does.
TEST(SketchRules, AMaskedSelectAfterAMatmulTakesItsTilesOrItsOwn) {
  for (bool column_fill : {false, true}) {
    Tensor a = placeholder({8, 6}, "a"), b = placeholder({6, 8}, "b"), mask = placeholder({8}, "mask");
    Tensor fill = placeholder({column_fill ? 8 : 1, 1}, "fill");
    Var k = reduce_axis(6, "k");
    Tensor mm = compute({8, 8}, [&](Var i, Var j) { return sum(a(i, k) * b(k, j), {k}); }, "mm");
    Tensor masked = compute(
        {8, 8},
        [&](Var i, Var j) {
          return select(mask(j) != Expr(0.0f), fill(column_fill ? Expr(i) : Expr(int64_t{0}), Expr(int64_t{0})),
                        mm(i, j));
        },
        "masked");
    SketchTask task;
    task.dag = std::make_shared<const ComputeDAG>(ComputeDAG({a, b, mask, fill}, {masked}));
    task.vector_width = 4;
    int fused = 0;
    for (const State& s : generate_sketches(task)) fused += s.stage(s.stage_index("mm")).attach_stage == s.stage_index("masked");
    if (column_fill) EXPECT_EQ(fused, 0);
    else EXPECT_GT(fused, 0);
    SketchPolicy policy(task);
    std::mt19937_64 rng(5);
    for (const State& s : policy.sample(8, rng)) EXPECT_EQ(testing::check_with_c_backend(s), "") << s.steps_json().dump();
  }
}

TEST(SketchRules, MatmulSketchesAreTilingAndCacheWriteFusedAtTwoLevels) {
  SketchTask task = sketch_task("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
  task.settings.pack_reused_inputs = false;
  auto sketches = generate_sketches(task);
  ASSERT_EQ(sketches.size(), 3u);
  int with_cache = 0, plain = 0;
  for (const State& s : sketches) {
    int local = s.stage_index("C_local");
    if (local < 0) {
      ++plain;
      // SSRSRS: i and j in 4 levels, k in 2 -> 10 loops, order S S R S R S.
      const Stage& c = s.stage(s.stage_index("C"));
      ASSERT_EQ(c.leaves.size(), 10u);
      const char* kinds = "SSSSRSSRSS";
      for (size_t p = 0; p < c.leaves.size(); ++p)
        EXPECT_EQ(c.iters[c.leaves[p]].kind == IterKind::kReduce, kinds[p] == 'R') << p;
      continue;
    }
    ++with_cache;
    const Stage& l = s.stage(local);
    EXPECT_EQ(l.compute_at, ComputeAtKind::kIter);
    EXPECT_EQ(l.attach_stage, s.stage_index("C"));
  }
  EXPECT_EQ(plain, 1);
  EXPECT_EQ(with_cache, 2);
}

TEST(SketchRules, PackingAddsAPackedVariantOfEachFusedMatmulSketch) {
  auto sketches = generate_sketches(sketch_task("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}));
  ASSERT_EQ(sketches.size(), 5u);
  int packed = 0;
  for (const State& s : sketches) {
    const int b_local = s.stage_index("B_local");
    if (b_local < 0) continue;
    ++packed;
    EXPECT_EQ(s.stage_index("A_local"), -1) << "A's last index is the reduce axis: not packed";
    const Stage& b = s.stage(b_local);
    EXPECT_EQ(b.scope, BufferScope::kLocal);
    EXPECT_NE(b.compute_at, ComputeAtKind::kInlined) << "a packing copy is not always-inlined";
    // The packed panel is read by the tiled cache-write stage.
    EXPECT_GE(s.stage_index("C_local"), 0);
    EXPECT_TRUE(sketch_analysis::is_tiled(s.stage(s.stage_index("C_local"))));
  }
  EXPECT_EQ(packed, 2);
}

TEST(SketchRules, OnlyAReusedInputIndexedByTheInnermostAxisIsPackable) {
  State mm = State::initial(std::make_shared<const ComputeDAG>(
      make_workload("matmul", {{"M", 64}, {"N", 64}, {"K", 64}})));
  auto inputs = sketch_analysis::packable_inputs(mm, mm.stage_index("C"));
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(mm.stage(inputs[0].stage).name(), "B");
  EXPECT_EQ(inputs[0].dim, 1) << "B[k, j]: j is B's last dimension";
}

TEST(SketchRules, AnInputIndexedByTheInnermostAxisInAnotherDimensionIsPackedTransposed) {
  // dense reads W[j, k]: the innermost axis j is W's first dimension.
  State dense = State::initial(std::make_shared<const ComputeDAG>(
      make_workload("dense_bias_relu", {{"M", 16}, {"N", 32}, {"K", 8}})));
  auto inputs = sketch_analysis::packable_inputs(dense, dense.stage_index("dense"));
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(dense.stage(inputs[0].stage).name(), "W");
  EXPECT_EQ(inputs[0].dim, 0);
  int packed = 0;
  for (const State& s : generate_sketches(sketch_task("dense_bias_relu", {{"M", 16}, {"N", 32}, {"K", 8}}))) {
    const int w_local = s.stage_index("W_local");
    if (w_local < 0) continue;
    ++packed;
    const Stage& w = s.stage(w_local);
    EXPECT_EQ(w.storage_order, (std::vector<int>{1, 0})) << "W_local[k, j]: j contiguous";
    EXPECT_EQ(sketch_analysis::innermost_spatial_axis(w), 0) << "the copy's loops follow its layout";
  }
  EXPECT_EQ(packed, 3) << "fused at 2 levels and plain tiling";
}

TEST(SketchRules, ConvOutputChannelsBecomeTheVectorAxis) {
  // Output width 56 is 3 vectors and a half; the 64 output channels are 4.
  SketchTask task = sketch_task("conv2d_bias_relu", nlohmann::json::object());
  State initial = State::initial(task.dag);
  EXPECT_EQ(sketch_analysis::better_vector_axis(task, initial, initial.stage_index("conv")), 1);
  int channel_innermost = 0;
  for (const State& s : generate_sketches(task)) {
    const Stage& conv = s.stage(s.stage_index("conv"));
    if (conv.storage_order.empty()) {
      EXPECT_EQ(sketch_analysis::innermost_spatial_axis(conv), 3) << "w, as Ansor";
      continue;
    }
    ++channel_innermost;
    EXPECT_EQ(conv.storage_order, (std::vector<int>{0, 2, 3, 1})) << "conv[n, h, w, k]";
    EXPECT_EQ(sketch_analysis::innermost_spatial_axis(conv), 1) << "k";
    const int kernel_local = s.stage_index("kernel_local");
    ASSERT_GE(kernel_local, 0) << "channels innermost, the kernel is always packed";
    EXPECT_EQ(s.stage(kernel_local).storage_order, (std::vector<int>{1, 2, 3, 0})) << "kernel_local[c, r, s, k]";
  }
  EXPECT_EQ(channel_innermost, 3) << "fused at 2 levels or tiled plainly";
}

TEST(SketchRules, AnInnermostAxisThatFillsVectorsKeepsItsPlace) {
  SketchTask task = sketch_task("conv2d_bias_relu", {{"N", 1}, {"C", 16}, {"H", 8}, {"W", 32}, {"K", 32},
                                                     {"R", 3}, {"S", 3}, {"stride", 1}, {"pad", 1}, {"dilation", 1}});
  State initial = State::initial(task.dag);
  EXPECT_EQ(sketch_analysis::better_vector_axis(task, initial, initial.stage_index("conv")), -1);
}

TEST(SketchRules, AStridedOutputWidthGivesWayToTheOutputChannels) {
  // Width 32 fills vectors, but at stride 2 its vector would read every
  // other input column: the 32 output channels take the vector loop.
  SketchTask task = sketch_task("conv2d_bias_relu", {{"N", 1}, {"C", 3}, {"H", 64}, {"W", 64}, {"K", 32},
                                                     {"R", 7}, {"S", 7}, {"stride", 2}, {"pad", 3}, {"dilation", 1}});
  State initial = State::initial(task.dag);
  EXPECT_EQ(sketch_analysis::better_vector_axis(task, initial, initial.stage_index("conv")), 1);
}

TEST(SketchRules, AGroupedConvWhoseGroupsFillVectorsTakesItsOutputChannels) {
  // 4 groups of 16 output channels: each vector of channels reads one input
  // channel (a broadcast). With 8 groups of 8 it would be a gather.
  const auto params = [](int64_t groups) {
    return nlohmann::json{{"N", 1},   {"C", 64}, {"H", 56},      {"W", 56},      {"K", 64},     {"R", 3},
                          {"S", 3},   {"pad", 1}, {"stride", 1}, {"dilation", 1}, {"groups", groups}};
  };
  SketchTask four = sketch_task("group_conv2d", params(4));
  State s4 = State::initial(four.dag);
  EXPECT_EQ(sketch_analysis::better_vector_axis(four, s4, s4.stage_index("conv")), 1);
  SketchTask eight = sketch_task("group_conv2d", params(8));
  State s8 = State::initial(eight.dag);
  EXPECT_EQ(sketch_analysis::better_vector_axis(eight, s8, s8.stage_index("conv")), -1);
}

TEST(SketchRules, ElementwiseConsumerIsFusedAndBiasReluIsNotInlinedWhenOutput) {
  SketchTask task = sketch_task("dense_bias_relu", {{"M", 16}, {"N", 32}, {"K", 8}});
  task.settings.pack_reused_inputs = false;
  auto sketches = generate_sketches(task);
  ASSERT_EQ(sketches.size(), 3u);
  int fused = 0;
  for (const State& s : sketches) {
    const Stage& dense = s.stage(s.stage_index("dense"));
    EXPECT_TRUE(sketch_analysis::is_tiled(dense));
    if (dense.compute_at == ComputeAtKind::kIter) {
      ++fused;
      EXPECT_EQ(dense.attach_stage, s.stage_index("relu"));
    }
    EXPECT_EQ(s.stage_index("dense_local"), -1) << "a fusible consumer needs no cache write";
  }
  EXPECT_EQ(fused, 2);
}

TEST(SketchRules, RfactorSketchesFactorTheInnerAndTheOuterPart) {
  auto sketches = generate_sketches(sketch_task("norm", {{"M", 64}, {"N", 64}}));
  ASSERT_EQ(sketches.size(), 3u);
  int with_rf = 0;
  for (const State& s : sketches) {
    int rf = s.stage_index("sumsq_rf");
    if (rf < 0) continue;
    ++with_rf;
    EXPECT_EQ(s.stage(rf).op->axes.size(), 2u) << "sumsq's axis plus the factored one";
  }
  EXPECT_EQ(with_rf, 2);
}

TEST(SketchRules, StrictlyInlineableIntermediateStageIsInlinedInEverySketch) {
  // matmul -> bias add -> relu: the bias add is element-wise and not an
  // output, so it is inlined and the matmul fuses into relu through it.
  Tensor A = placeholder({16, 8}, "A"), B = placeholder({8, 32}, "B"), bias = placeholder({32}, "bias");
  Var k = reduce_axis(8, "rk");
  Tensor C = compute({16, 32}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor D = compute({16, 32}, [&](Var i, Var j) { return C(i, j) + bias(j); }, "bias_add");
  Tensor R = compute({16, 32}, [&](Var i, Var j) { return max(D(i, j), Expr(0.0f)); }, "relu");
  SketchTask task;
  task.dag = std::make_shared<const ComputeDAG>(ComputeDAG({A, B, bias}, {R}));
  task.settings.pack_reused_inputs = false;
  auto sketches = generate_sketches(task);
  ASSERT_EQ(sketches.size(), 3u);
  int fused_into_relu = 0;
  for (const State& s : sketches) {
    EXPECT_EQ(s.stage(s.stage_index("bias_add")).compute_at, ComputeAtKind::kInlined);
    const Stage& c = s.stage(s.stage_index("C"));
    if (c.compute_at == ComputeAtKind::kIter && c.attach_stage == s.stage_index("relu")) ++fused_into_relu;
  }
  EXPECT_EQ(fused_into_relu, 2);
}

TEST(SketchRules, PaddingTransposesAndOutputsAreNotStrictlyInlineable) {
  // Padding is a select and a transpose reorders axes: their location is
  // left to the random annotation (Ansor's definition).
  auto conv = std::make_shared<const ComputeDAG>(make_workload("conv2d", nlohmann::json::object()));
  State s = State::initial(conv);
  EXPECT_FALSE(sketch_analysis::is_strictly_inlineable(s, s.stage_index("pad")));
  auto tbg = std::make_shared<const ComputeDAG>(make_workload("tbg", nlohmann::json::object()));
  State t = State::initial(tbg);
  EXPECT_FALSE(sketch_analysis::is_strictly_inlineable(t, t.stage_index("query_T")));
  auto softmax = std::make_shared<const ComputeDAG>(make_workload("softmax", nlohmann::json::object()));
  State x = State::initial(softmax);
  EXPECT_FALSE(sketch_analysis::is_strictly_inlineable(x, x.stage_index("expv"))) << "exp is expensive";
}

// TBG: query_T is read without the output's innermost axis (a broadcast
// in the vector loop) and is inlined in every sketch; value_T is read along
// it, so its location is left to the random annotation, and it is not
// packed into a second copy.
TEST(SketchRules, ATransposeReadAsABroadcastIsInlinedAndTheOtherIsNotPackedAgain) {
  for (const State& s : generate_sketches(sketch_task("tbg", nlohmann::json::object()))) {
    EXPECT_EQ(s.stage(s.stage_index("query_T")).compute_at, ComputeAtKind::kInlined) << s.to_string();
    EXPECT_NE(s.stage(s.stage_index("value_T")).compute_at, ComputeAtKind::kInlined) << s.to_string();
    EXPECT_LT(s.stage_index("value_T_local"), 0) << s.to_string();
  }
}

TEST(SketchRules, WithoutTheRuleATransposeReadAsABroadcastIsNotInlined) {
  SketchTask task = sketch_task("tbg", nlohmann::json::object());
  task.settings.inline_broadcast_copies = false;
  for (const State& s : generate_sketches(task))
    EXPECT_NE(s.stage(s.stage_index("query_T")).compute_at, ComputeAtKind::kInlined) << s.to_string();
}

TEST(SketchRules, ACopyThatIsNotPureDataMovementIsNotABroadcastCopy) {
  // The conv's padding is a select: its location stays free.
  auto conv = std::make_shared<const ComputeDAG>(make_workload("conv2d", nlohmann::json::object()));
  State s = State::initial(conv);
  EXPECT_FALSE(sketch_analysis::is_data_movement(s, s.stage_index("pad")));
  auto tbg = std::make_shared<const ComputeDAG>(make_workload("tbg", nlohmann::json::object()));
  State t = State::initial(tbg);
  EXPECT_TRUE(sketch_analysis::is_data_movement(t, t.stage_index("query_T")));
  EXPECT_TRUE(sketch_analysis::reads_without_innermost_axis(t, t.stage_index("out"), t.stage_index("query_T")));
  EXPECT_FALSE(sketch_analysis::reads_without_innermost_axis(t, t.stage_index("out"), t.stage_index("value_T")));
}

TEST(SketchRules, EverySketchOfEveryWorkloadLowers) {
  for (const auto& w : workload_registry()) {
    for (const State& s : generate_sketches(sketch_task(w.name, w.small_params, 4)))
      EXPECT_NO_THROW(lower(s)) << w.name << "\n" << s.to_string();
  }
}

TEST(SketchRules, SketchSplitsAreHolesOfLengthOne) {
  for (const State& s : generate_sketches(sketch_task("conv2d", nlohmann::json::object()))) {
    for (const auto& step : s.steps()) {
      if (auto* sp = dynamic_cast<const SplitStep*>(step.get()))
        for (int64_t l : sp->lengths) EXPECT_EQ(l, 1);
    }
  }
}

}  // namespace
}  // namespace loom
