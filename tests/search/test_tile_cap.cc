// The tile cap on a round's model-chosen measurements (search.tile_cap).
#include <gtest/gtest.h>

#include "search/evolutionary_search.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

// A 16x16x16 matmul (stage 1 is C) split into i [outer, i_inner],
// j [outer, j_inner], k [outer, k_inner]; `tag` varies the outer i split so
// that states of one innermost tile still differ.
State matmul_tiled(int64_t i_inner, int64_t j_inner, int64_t k_inner, int64_t tag = 1) {
  auto dag = testing::workload("matmul", R"({"M":16,"N":16,"K":16})");
  nlohmann::json steps = nlohmann::json::array();
  steps.push_back({"SP", 2, 0, 16, {tag, i_inner}, 1});
  steps.push_back({"SP", 2, 3, 16, {j_inner}, 1});
  steps.push_back({"SP", 2, 5, 16, {k_inner}, 1});
  return State::from_json(dag, steps);
}

std::vector<std::string> tiles(const std::vector<State>& states) {
  std::vector<std::string> out;
  for (const auto& s : states) out.push_back(innermost_tile_key(s));
  return out;
}

TEST(TileCap, InnermostTileIsTheLastFactorOfEverySplit) {
  EXPECT_EQ(innermost_tile_key(matmul_tiled(4, 8, 2)), "2:4 2:8 2:2 ");
  EXPECT_EQ(innermost_tile_key(matmul_tiled(4, 8, 2, /*tag=*/2)), innermost_tile_key(matmul_tiled(4, 8, 2)));
  EXPECT_NE(innermost_tile_key(matmul_tiled(4, 8, 4)), innermost_tile_key(matmul_tiled(4, 8, 2)));
}

TEST(TileCap, AtMostTheCapShareATileWhileOtherTilesRemain) {
  State a = matmul_tiled(4, 8, 2), b = matmul_tiled(1, 16, 8);
  std::vector<State> ranked = {a, matmul_tiled(4, 8, 2, 2), matmul_tiled(4, 8, 2, 4), matmul_tiled(4, 8, 2, 1),
                               b, matmul_tiled(1, 16, 8, 2)};
  std::vector<State> out = select_with_tile_cap(ranked, 4, 0.5);
  std::vector<std::string> expect = {innermost_tile_key(a), innermost_tile_key(a), innermost_tile_key(b),
                                     innermost_tile_key(b)};
  EXPECT_EQ(tiles(out), expect);
  EXPECT_EQ(state_key(out[2]), state_key(ranked[4]));  // best first within the cap
}

TEST(TileCap, SkippedStatesFillTheRoundWhenTooFewOtherTilesAreLeft) {
  State a = matmul_tiled(4, 8, 2), b = matmul_tiled(1, 16, 8);
  std::vector<State> ranked = {a, matmul_tiled(4, 8, 2, 2), matmul_tiled(4, 8, 2, 4), b};
  std::vector<State> out = select_with_tile_cap(ranked, 4, 0.5);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(state_key(out[2]), state_key(b));
  EXPECT_EQ(state_key(out[3]), state_key(ranked[2]));
}

TEST(TileCap, CapOfOneKeepsTheRankOrder) {
  std::vector<State> ranked = {matmul_tiled(4, 8, 2), matmul_tiled(4, 8, 2, 2), matmul_tiled(1, 16, 8),
                               matmul_tiled(4, 8, 2, 4)};
  std::vector<State> out = select_with_tile_cap(ranked, 3, 1.0);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(state_key(out[i]), state_key(ranked[i]));
}

}  // namespace
}  // namespace loom
