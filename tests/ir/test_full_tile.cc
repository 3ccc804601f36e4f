// Full-tile tests of non-divisible splits and the guard-free reduction nests
// lowering builds from them.
#include <gtest/gtest.h>

#include "ir/full_tile.h"
#include "ir/lower.h"
#include "ir/simplify.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

bool holds_at(const Expr& test, const Var& v, int64_t value) {
  return can_prove(substitute(test, {{v, int_imm(value)}}));
}

TEST(FullTile, AGuardHoldsForTheWholeTileWhenItsLastRowIsInside) {
  Var tile = make_var("i.0", 97), row = make_var("i.1", 6);
  Expr test = holds_for_all(tile * 6 + row < 577, {row->var_id});
  ASSERT_TRUE(test.defined());
  EXPECT_TRUE(holds_at(test, tile, 95));   // rows 570..575
  EXPECT_FALSE(holds_at(test, tile, 96));  // rows 576..581: only 576 exists
}

TEST(FullTile, ALowerBoundTakesTheInnerMinimum) {
  Var x = make_var("x", 10), r = make_var("r", 3);
  Expr test = holds_for_all(x + r - 1 >= 0, {r->var_id});
  ASSERT_TRUE(test.defined());
  EXPECT_FALSE(holds_at(test, x, 0));
  EXPECT_TRUE(holds_at(test, x, 1));
}

TEST(FullTile, AnUnboundedInnerPartGivesNoTest) {
  Var x = make_var("x", 10), n = make_var("n", 0);
  EXPECT_FALSE(holds_for_all(x + n < 7, {n->var_id}).defined());
}

TEST(FullTile, ANonComparisonGivesNoTest) {
  Var x = make_var("x", 10);
  EXPECT_FALSE(holds_for_all(x + 1, {x->var_id}).defined());
}

int count_guarded_reduce_nests(const Stmt& s, const std::string& reduce_var, int* unguarded) {
  int loops = 0;
  visit_stmt(s, [&](const Stmt& x) {
    if (x->kind != StmtKind::kFor || x->loop_var->name != reduce_var) return;
    ++loops;
    bool guarded = false;
    visit_stmt(x, [&](const Stmt& y) { guarded |= y->kind == StmtKind::kIf; });
    if (!guarded) ++*unguarded;
  });
  return loops;
}

// C[13, 20] with rows tiled by 4 (the last tile holds one row): the rows'
// guard sits inside the reduction; lowering tests it once per tile and runs
// whole tiles through a copy of the reduction without it.
TEST(LowerFullTiles, AWholeTileOfANonDivisibleSplitRunsAReductionWithoutGuards) {
  auto dag = testing::workload("matmul", R"({"M":13,"N":20,"K":12})");
  State s = State::initial(dag);
  const int c = s.stage_index("C");
  s = s.split(c, 0, {4});                // i -> i.0 (4 tiles), i.1 (4)
  s = s.reorder(c, {0, 2, 3, 1});        // i.0, j, rk, i.1
  int unguarded = 0;
  const int nests = count_guarded_reduce_nests(lower(s).body, "rk", &unguarded);
  EXPECT_EQ(nests, 2) << to_string(lower(s));
  EXPECT_EQ(unguarded, 1) << to_string(lower(s));
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(LowerFullTiles, TwoPartialAxesGiveFourVersionsOfTheReduction) {
  auto dag = testing::workload("matmul", R"({"M":13,"N":21,"K":12})");
  State s = State::initial(dag);
  const int c = s.stage_index("C");
  s = s.split(c, 0, {4}).split(c, 2, {8});  // i.0, i.1, j.0, j.1, rk
  s = s.reorder(c, {0, 2, 4, 1, 3});        // i.0, j.0, rk, i.1, j.1
  int unguarded = 0;
  EXPECT_EQ(count_guarded_reduce_nests(lower(s).body, "rk", &unguarded), 4) << to_string(lower(s));
  EXPECT_EQ(unguarded, 1);
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

// K = 13 tiled by 4: the reduction's outer loop runs its three whole tiles
// without the guard, then the last (one element) with it.
TEST(LowerFullTiles, APartialReductionTileIsSplitOffTheWholeOnes) {
  auto dag = testing::workload("matmul", R"({"M":4,"N":4,"K":13})");
  State s = State::initial(dag);
  const int c = s.stage_index("C");
  s = s.split(c, 2, {4});  // rk -> rk.0, rk.1: the last rk tile is partial
  const LoweredFunc f = lower(s);
  int whole_tiles = 0, guarded = 0;
  visit_stmt(f.body, [&](const Stmt& x) {
    if (x->kind == StmtKind::kFor && x->loop_var->name == "rk.0") {
      EXPECT_EQ(x->extent, 3) << to_string(f);
      visit_stmt(x, [&](const Stmt& y) { EXPECT_NE(y->kind, StmtKind::kIf) << to_string(f); });
      ++whole_tiles;
    }
    guarded += x->kind == StmtKind::kIf;
  });
  EXPECT_EQ(whole_tiles, 1) << to_string(f);
  EXPECT_EQ(guarded, 1) << to_string(f);  // the last tile's rk.1 < 1
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(LowerFullTiles, WithoutFullTilesEveryGuardStaysInPlace) {
  auto dag = testing::workload("matmul", R"({"M":4,"N":4,"K":13})");
  State s = State::initial(dag);
  s = s.split(s.stage_index("C"), 2, {4});
  LowerOptions options;
  options.full_tiles = false;
  int loops = 0;
  visit_stmt(lower(s, options).body, [&](const Stmt& x) { loops += x->kind == StmtKind::kFor; });
  EXPECT_EQ(loops, 4);  // i, j, rk.0, rk.1
}

// Stores to `buffer` that some If encloses.
int guarded_stores(const Stmt& body, const std::string& buffer) {
  int n = 0;
  visit_stmt(body, [&](const Stmt& x) {
    if (x->kind != StmtKind::kIf) return;
    visit_stmt(x, [&](const Stmt& y) { n += y->kind == StmtKind::kStore && y->buffer == buffer; });
  });
  return n;
}

// C[8, 20] in tiles of 8 columns (the last holds 4), accumulated in a local
// tile C_local: when everything the tile reads along j is a tile too, the
// tile computes all 8 columns unguarded; only C's write-back is guarded.
State matmul_in_local_tiles(bool cache_b) {
  auto dag = testing::workload("matmul", R"({"M":8,"N":20,"K":8})");
  State s = State::initial(dag);
  s = s.cache_write(s.stage_index("C"), BufferScope::kLocal);
  if (cache_b) s = s.cache_read(s.stage_index("B"), BufferScope::kLocal, {s.stage_index("C_local")});
  const int c = s.stage_index("C");
  s = s.split(c, 1, {8});  // C: i, j.0, j.1
  s = s.compute_at(s.stage_index("C_local"), c, 1);
  if (cache_b) s = s.compute_at(s.stage_index("B_local"), c, 1);
  return s;
}

TEST(LowerFullTiles, ALocalTileComputesPastTheEdgeWhenItsReadsStayInsideTheirTiles) {
  const State s = matmul_in_local_tiles(true);
  const LoweredFunc f = lower(s);
  EXPECT_EQ(guarded_stores(f.body, "C_local"), 0) << to_string(f);
  EXPECT_GT(guarded_stores(f.body, "C"), 0) << to_string(f);
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

TEST(LowerFullTiles, ALocalTileKeepsItsGuardWhenAReadWouldLeaveItsTensor) {
  const State s = matmul_in_local_tiles(false);  // B[rk, j] read directly: j = 20..23 is outside B
  const LoweredFunc f = lower(s);
  EXPECT_GT(guarded_stores(f.body, "C_local"), 0) << to_string(f);
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

}  // namespace
}  // namespace loom
