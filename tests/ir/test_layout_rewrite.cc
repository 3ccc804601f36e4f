// The layout rewrite: blocked layouts, the LR step and its lowering (a
// constant input read through an argument in the order of its reader's
// loops).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/layout.h"
#include "ir/lower.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

using testing::check_with_c_backend;

std::shared_ptr<const ComputeDAG> matmul_with_constant_b(int64_t m, int64_t n, int64_t k) {
  auto dag = std::make_shared<ComputeDAG>(*testing::workload(
      "matmul", nlohmann::json({{"M", m}, {"N", n}, {"K", k}}).dump()));
  dag->mark_constant("B");
  return dag;
}

// B copied at root and pre-transformed: stages A, B, B_local, C.
State rewritten(std::shared_ptr<const ComputeDAG> dag) {
  State s = State::initial(dag);
  const int b = s.stage_index("B");
  return s.cache_read(b, BufferScope::kLocal, {s.stage_index("C")}).layout_rewrite(b + 1);
}

const Buffer& arg(const LoweredFunc& f, const std::string& name) {
  const Buffer* b = f.find_buffer(name);
  if (!b) throw LoomError("no argument " + name + " in\n" + to_string(f));
  return *b;
}

TEST(BlockedLayout, ApplyStoresEachElementAtItsIndexAndZeroesThePads) {
  // [3, 5] stored as (j / 2, i, j % 2): j's last block holds one column.
  BlockedLayout l{"X", {3, 5}, {{1, 2, 3}, {0, 1, 3}, {1, 1, 2}}};
  ASSERT_TRUE(is_valid_layout(l));
  EXPECT_EQ(l.size(), 18);
  EXPECT_EQ(l.to_string(), "[X: d1/2, d0, d1%2]");
  std::vector<float> src(15);
  for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<float>(k + 1);
  std::vector<float> dst = l.apply(src.data());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      Expr at = l.index({int_imm(i), int_imm(j)});
      ASSERT_TRUE(is_const_int(at));
      EXPECT_EQ(at->int_value, ((j / 2) * 3 + i) * 2 + j % 2);
      EXPECT_EQ(dst[at->int_value], src[i * 5 + j]);
    }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(dst[(2 * 3 + i) * 2 + 1], 0.0f);  // column 5 does not exist
}

TEST(BlockedLayout, PiecesThatAreNotAMixedRadixAreInvalid) {
  EXPECT_FALSE(is_valid_layout({"X", {8}, {{0, 3, 2}, {0, 1, 4}}}));   // 4 * 1 != 3
  EXPECT_FALSE(is_valid_layout({"X", {8}, {{0, 4, 2}}}));               // no stride-1 piece
  EXPECT_FALSE(is_valid_layout({"X", {8}, {{0, 4, 3}, {0, 1, 4}}}));   // a block past the end
  EXPECT_FALSE(is_valid_layout({"X", {8, 2}, {{0, 1, 8}}}));           // dimension 1 missing
}

TEST(LayoutRewrite, BlockedLayoutFollowsTheReadersTiledLoops) {
  State s = rewritten(matmul_with_constant_b(8, 16, 32));
  const int c = s.stage_index("C");
  s = s.split(c, 1, {4}).split(c, 3, {8});  // i j.0 j.1 k.0 k.1
  s = s.reorder(c, {0, 1, 3, 4, 2});        // i j.0 k.0 k.1 j.1
  s = s.annotate(c, 4, IterAnnotation::kVectorize);
  LoweredFunc f = lower(s);
  const Buffer& b = arg(f, "B_local");
  ASSERT_TRUE(b.layout);
  EXPECT_EQ(b.layout->source, "B");
  EXPECT_EQ(b.layout->to_string(), "[B: d1/4, d0/8, d0%8, d1%4]");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{4, 4, 8, 4}));
  EXPECT_EQ(f.find_buffer("B"), nullptr) << "the source is no argument of the program";
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(LayoutRewrite, TilesThatDoNotDivideGetAZeroPaddedLastBlock) {
  State s = rewritten(matmul_with_constant_b(5, 10, 7));
  const int c = s.stage_index("C");
  s = s.split(c, 1, {4});  // j: 3 x 4 over 10; loops i j.0 j.1 k
  LoweredFunc f = lower(s);
  const Buffer& b = arg(f, "B_local");
  EXPECT_EQ(b.layout->to_string(), "[B: d1/4, d1%4, d0]");
  EXPECT_EQ(b.size(), 3 * 7 * 4);
  EXPECT_EQ(check_with_c_backend(s), "");
}

TEST(LayoutRewrite, RoundTrips) {
  State s = rewritten(matmul_with_constant_b(4, 4, 4));
  EXPECT_EQ(s.steps_json().dump(), R"([["CHR",1,"local",[2]],["LR",2]])");
  State back = State::from_json(s.dag_ptr(), s.steps_json());
  EXPECT_TRUE(back.stage(2).pretransformed);
  EXPECT_EQ(back.fingerprint(), s.fingerprint());
}

TEST(LayoutRewrite, OnlyACopyOfAConstantInputIsPreTransformed) {
  auto plain = testing::workload("matmul", R"({"M":4,"N":4,"K":4})");
  State s = State::initial(plain);
  s = s.cache_read(s.stage_index("B"), BufferScope::kLocal, {s.stage_index("C")});
  try {
    s.layout_rewrite(s.stage_index("B_local"));
    FAIL() << "a copy of a non-constant input was pre-transformed";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("B is not a constant input"), std::string::npos) << e.what();
  }
  State c = State::initial(matmul_with_constant_b(4, 4, 4));
  EXPECT_THROW(c.layout_rewrite(c.stage_index("C")), LoomError);  // the output, not a copy
}

TEST(LayoutRewrite, APreTransformedCopyCannotMove) {
  State s = rewritten(matmul_with_constant_b(4, 4, 4));
  try {
    s.compute_at(s.stage_index("B_local"), s.stage_index("C"), 0);
    FAIL() << "a pre-transformed copy moved into its reader";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("pre-transformed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.compute_inline(s.stage_index("B_local")), LoomError);
}

}  // namespace
}  // namespace loom
