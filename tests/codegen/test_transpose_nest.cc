// Which loop nests are transposing copies (codegen/passes/transpose_nest.h).
#include <gtest/gtest.h>

#include <functional>
#include <utility>
#include <vector>

#include "codegen/passes/transpose_nest.h"
#include "tests/support/loop_nest.h"

namespace loom {
namespace {

using loop_nest::ld;

// dst[k * n + l] = src[l * stride + k] over k in 0..m, l in 0..n (the store
// contiguous along the inner loop, the load along the outer one).
Stmt transpose(int64_t m, int64_t n, int64_t stride, ForKind inner_kind = ForKind::kSerial) {
  Var k = make_var("k", m), l = make_var("l", n);
  return make_for(k, m, ForKind::kSerial,
                  make_for(l, n, inner_kind, make_store("dst", Expr(k) * n + l, ld("src", Expr(l) * stride + k))));
}

// for k in 0..32: for l in 0..32: body(k, l).
Stmt nest32(const std::function<Stmt(const Var&, const Var&)>& body, ForKind outer_kind = ForKind::kSerial) {
  Var k = make_var("k", 32), l = make_var("l", 32);
  return make_for(k, 32, outer_kind, make_for(l, 32, ForKind::kSerial, body(k, l)));
}

TEST(TransposeNest, ACopyContiguousAlongOtherLoopsOnEachSideMatches) {
  Stmt s = transpose(64, 64, 768);
  auto t = match_transpose_nest(s, 16);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->outer(), s.get());
  EXPECT_EQ(t->store_axis, t->inner());
  EXPECT_EQ(t->load_axis, t->outer());
}

TEST(TransposeNest, TheStoreMayBeContiguousAlongTheOuterLoop) {
  // dst[l * 32 + k] = src[k * 20 + l] over k in 0..32 (outer), l in 0..20.
  Var k = make_var("k", 32), l = make_var("l", 20);
  Stmt s = make_for(k, 32, ForKind::kSerial,
                    make_for(l, 20, ForKind::kSerial, make_store("dst", Expr(l) * 32 + k, ld("src", Expr(k) * 20 + l))));
  auto t = match_transpose_nest(s, 16);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->store_axis, t->outer());
  EXPECT_EQ(t->load_axis, t->inner());
}

TEST(TransposeNest, AVectorizedInnerLoopMatches) {
  EXPECT_TRUE(match_transpose_nest(transpose(16, 16, 16, ForKind::kVectorized), 16).has_value());
}

TEST(TransposeNest, TheTileIsTheWidestPowerOfTwoBothAxesHold) {
  EXPECT_EQ(match_transpose_nest(transpose(64, 64, 64), 16)->width, 16);
  EXPECT_EQ(match_transpose_nest(transpose(15, 64, 64), 16)->width, 8);
  EXPECT_EQ(match_transpose_nest(transpose(64, 8, 64), 16)->width, 8);
  EXPECT_EQ(match_transpose_nest(transpose(64, 15, 64), 8)->width, 8);
}

TEST(TransposeNest, ExtentsBelowEightDoNotMatch) {
  EXPECT_FALSE(match_transpose_nest(transpose(7, 64, 64), 16).has_value());
  EXPECT_FALSE(match_transpose_nest(transpose(64, 7, 64), 16).has_value());
  EXPECT_EQ(match_transpose_nest(transpose(64, 7, 64), 4)->width, 4);
}

TEST(TransposeNest, AWidthThatIsNotAPowerOfTwoDoesNotMatch) {
  // The transpose network works on power-of-two tiles.
  EXPECT_FALSE(match_transpose_nest(transpose(64, 64, 64), 12).has_value());
}

// conv[j, k, l] = local[k, l, j]: a channels-last tile written out as
// NCHW; the rows loop k is between the two axes.
Stmt channels_last_out(ForKind middle_kind = ForKind::kSerial) {
  Var j = make_var("j", 16), k = make_var("k", 7), l = make_var("l", 56);
  return make_for(j, 16, ForKind::kSerial,
                  make_for(k, 7, middle_kind,
                           make_for(l, 56, ForKind::kVectorized,
                                    make_store("conv", (Expr(j) * 7 + k) * 56 + l,
                                               ld("local", (Expr(k) * 56 + l) * 16 + j)))));
}

TEST(TransposeNest, ALoopBetweenTheTwoAxesRunsAroundTheTiles) {
  Stmt s = channels_last_out();
  auto t = match_transpose_nest(s, 16);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->loops.size(), 3u);
  EXPECT_EQ(t->outer(), t->loops[0]);
  EXPECT_EQ(t->inner(), t->loops[2]);
  EXPECT_EQ(t->load_axis, t->loops[0]);
  EXPECT_EQ(t->store_axis, t->loops[2]);
}

TEST(TransposeNest, ALoopTheStoreDoesNotMoveAlongDoesNotMatch) {
  // Every iteration of r stores the same elements: the order would matter.
  Var r = make_var("r", 3), k = make_var("k", 32), l = make_var("l", 32);
  Stmt s = make_for(r, 3, ForKind::kSerial,
                    make_for(k, 32, ForKind::kSerial,
                             make_for(l, 32, ForKind::kSerial,
                                      make_store("dst", Expr(k) * 32 + l, ld("src", (Expr(l) * 32 + k) * 3 + r)))));
  EXPECT_FALSE(match_transpose_nest(s, 16).has_value());
}

TEST(TransposeNest, APlainCopyDoesNotMatch) {
  Stmt s = nest32([](const Var& k, const Var& l) {
    return make_store("dst", Expr(k) * 32 + l, ld("src", Expr(k) * 32 + l));
  });
  EXPECT_FALSE(match_transpose_nest(s, 16).has_value());
}

TEST(TransposeNest, AStridedCopyWhoseRowsOverlapDoesNotMatch) {
  // dst[k, l] = src[2l + k]: along l the load steps 2, not over whole rows.
  EXPECT_FALSE(match_transpose_nest(transpose(32, 32, 2), 16).has_value());
  EXPECT_TRUE(match_transpose_nest(transpose(32, 32, 16), 16).has_value());
}

TEST(TransposeNest, ComputedValuesGuardsAndParallelLoopsDoNotMatch) {
  auto dst = [](const Var& k, const Var& l) { return Expr(k) * 32 + l; };
  auto src = [](const Var& k, const Var& l) { return ld("src", Expr(l) * 32 + k); };
  Stmt computed = nest32([&](const Var& k, const Var& l) { return make_store("dst", dst(k, l), src(k, l) * 2.0f); });
  Stmt guarded = nest32([&](const Var& k, const Var& l) {
    return make_if(Expr(l) < 30, make_store("dst", dst(k, l), src(k, l)));
  });
  Stmt parallel = nest32([&](const Var& k, const Var& l) { return make_store("dst", dst(k, l), src(k, l)); },
                         ForKind::kParallel);
  EXPECT_FALSE(match_transpose_nest(computed, 16).has_value());
  EXPECT_FALSE(match_transpose_nest(guarded, 16).has_value());
  EXPECT_FALSE(match_transpose_nest(parallel, 16).has_value());
}

// relu[c, x] = max(local[x, c] + bias[c], 0): a conv's epilogue on a
// channels-last tile written out channels-first.
Stmt bias_relu_out(const std::function<Expr(const Var& c, const Var& x)>& bias) {
  Var c = make_var("c", 32), x = make_var("x", 28);
  Expr local = ld("local", Expr(x) * 32 + c);
  return make_for(c, 32, ForKind::kSerial,
                  make_for(x, 28, ForKind::kVectorized,
                           make_store("relu", Expr(c) * 28 + x, max(local + bias(c, x), Expr(0.0f)))));
}

TEST(TransposeNest, AnElementwiseEpilogueMatchesWhereAllowed) {
  Stmt s = bias_relu_out([](const Var& c, const Var&) { return ld("bias", Expr(c)); });
  EXPECT_FALSE(match_transpose_nest(s, 16).has_value());
  auto t = match_transpose_nest(s, 16, /*elementwise=*/true);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->transposed->name, "local");
  EXPECT_EQ(t->store_axis, t->inner());
}

TEST(TransposeNest, AnEpilogueWithASecondLoadAlongTheStoreAxisDoesNotMatch) {
  // residual[c, x] moves along x too: it is not uniform across a column.
  Stmt s = bias_relu_out([](const Var& c, const Var& x) { return ld("residual", Expr(c) * 28 + x); });
  EXPECT_FALSE(match_transpose_nest(s, 16, true).has_value());
}

TEST(TransposeNest, AnEpilogueReadingTheStoredBufferDoesNotMatch) {
  Stmt s = bias_relu_out([](const Var& c, const Var&) { return ld("relu", Expr(c)); });
  EXPECT_FALSE(match_transpose_nest(s, 16, true).has_value());
}

TEST(TransposeNest, StoresThatOverlapAcrossRowsDoNotMatch) {
  // dst[k * 8 + l] over l in 0..32: rows 8 apart but 32 long.
  Stmt s = nest32([](const Var& k, const Var& l) {
    return make_store("dst", Expr(k) * 8 + l, ld("src", Expr(l) * 32 + k));
  });
  EXPECT_FALSE(match_transpose_nest(s, 16).has_value());
}

TEST(TransposeNest, AnInPlaceTransposeDoesNotMatch) {
  Stmt s = nest32([](const Var& k, const Var& l) {
    return make_store("src", Expr(k) * 32 + l, ld("src", Expr(l) * 32 + k));
  });
  EXPECT_FALSE(match_transpose_nest(s, 16).has_value());
}

// Runs the network on (row, column) labels: it must leave column j, rows in
// order, in row column_row[j].
void expect_transposes(int w) {
  const TransposeNetwork net = transpose_network(w);
  std::vector<std::vector<std::pair<int, int>>> rows(w);
  for (int r = 0; r < w; ++r)
    for (int c = 0; c < w; ++c) rows[r].push_back({r, c});
  for (const TransposeStage& st : net.stages) {
    ASSERT_EQ(static_cast<int>(st.low.size()), w);
    ASSERT_EQ(static_cast<int>(st.high.size()), w);
    for (int r = 0; r < w; ++r) {
      if (r & st.d) continue;
      std::vector<std::pair<int, int>> lo, hi;
      for (int i : st.low) lo.push_back(i < w ? rows[r][i] : rows[r | st.d][i - w]);
      for (int i : st.high) hi.push_back(i < w ? rows[r][i] : rows[r | st.d][i - w]);
      rows[r] = lo;
      rows[r | st.d] = hi;
    }
  }
  ASSERT_EQ(static_cast<int>(net.column_row.size()), w);
  for (int j = 0; j < w; ++j)
    for (int i = 0; i < w; ++i) EXPECT_EQ(rows[net.column_row[j]][i], std::make_pair(i, j)) << "w " << w;
}

TEST(TransposeNetwork, TransposesEveryPowerOfTwoTileInLog2WidthStages) {
  for (int w : {2, 4, 8, 16, 32}) {
    expect_transposes(w);
    int log2 = 0;
    while ((1 << log2) < w) ++log2;
    EXPECT_EQ(static_cast<int>(transpose_network(w).stages.size()), log2) << w;
  }
}

}  // namespace
}  // namespace loom
