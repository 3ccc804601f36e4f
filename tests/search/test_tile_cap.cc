// The tile cap on a round's model-chosen measurements (search.tile_cap).
#include <gtest/gtest.h>

#include "search/evolutionary_search.h"
#include "search/mutation_rule.h"
#include "sketch/sketch_policy.h"
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

// The same matmul with a cache-write stage (stage 3 writes C back from the
// accumulator C.local, stage 2) whose loops follow C.local's i and j splits
// at the outer tile (FSP): i = [i_outer, i_middle, i_inner], j likewise.
State matmul_cached(int64_t i_middle, int64_t i_inner, int64_t j_inner) {
  auto dag = testing::workload("matmul", R"({"M":16,"N":16,"K":16})");
  nlohmann::json steps = nlohmann::json::array();
  steps.push_back({"CHW", 2, "local"});
  steps.push_back({"SP", 2, 0, 16, {1, i_middle, i_inner}, 1});
  steps.push_back({"SP", 2, 4, 16, {1, 1, j_inner}, 1});
  steps.push_back({"SP", 2, 8, 16, {2}, 1});
  steps.push_back({"FSP", 3, 0, 1, 2});
  steps.push_back({"FSP", 3, 3, 2, 2});
  return State::from_json(dag, steps);
}

std::vector<std::string> tiles(const std::vector<State>& states) {
  std::vector<std::string> out;
  for (const auto& s : states) out.push_back(innermost_tile_key(s));
  return out;
}

TEST(TileCap, InnermostTileIsTheLastFactorOfEverySpatialSplit) {
  EXPECT_EQ(innermost_tile_key(matmul_tiled(4, 8, 2)), "2:4 2:8 ");
  EXPECT_EQ(innermost_tile_key(matmul_tiled(4, 8, 2, /*tag=*/2)), innermost_tile_key(matmul_tiled(4, 8, 2)));
  EXPECT_NE(innermost_tile_key(matmul_tiled(8, 4, 2)), innermost_tile_key(matmul_tiled(4, 8, 2)));
}

// Kernels of one shape that differ only in their reduction depth are one
// tile: capped apart, the neighbouring depths would fill a round between
// them (seventh session, 1-thread GEMM: 1x64 kernels 4 and 8 deep).
TEST(TileCap, ReductionDepthIsNotPartOfTheTile) {
  EXPECT_EQ(innermost_tile_key(matmul_tiled(4, 8, 4)), innermost_tile_key(matmul_tiled(4, 8, 2)));
}

// A cache stage's loops are sized by the outer tiles; they are not the
// micro-kernel (seed 4 of the 2-thread GEMM: one 1x64 kernel under dozens
// of keys, one per accumulator tile, escaped the cap).
TEST(TileCap, SplitsThatFollowAnotherSplitAreNotPartOfTheTile) {
  EXPECT_EQ(innermost_tile_key(matmul_cached(4, 2, 8)), "2:2 2:8 ");
  EXPECT_EQ(innermost_tile_key(matmul_cached(2, 2, 8)), innermost_tile_key(matmul_cached(4, 2, 8)));
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

// The cap holds even when the model's favourite tile fills the whole top of
// the evolution: the other tiles' best-scored states are kept aside for it
// (seed 4 of the 2-thread GEMM: 61 of 64 programs per round were one 1x64
// kernel with a cap of 0.5, because only the top 4 x 64 states were kept).
TEST(TileCap, HoldsWhenOneTileTakesTheWholeTopOfTheEvolution) {
  SketchTask task;
  task.dag = testing::workload("matmul", R"({"M":64,"N":64,"K":64})");
  task.threads = 2;
  std::mt19937_64 rng(5);
  std::vector<State> init = sample(task, 256, rng);
  const std::string favourite = innermost_tile_key(init[0]);
  // The favourite tile scores far above every other; ties broken by key.
  ScoreFn score = [&](const std::vector<State>& states) {
    std::vector<float> out;
    for (const auto& s : states)
      out.push_back((innermost_tile_key(s) == favourite ? 1000.0f : 0.0f) +
                    static_cast<float>(std::hash<std::string>{}(state_key(s)) % 100) / 100.0f);
    return out;
  };
  SearchSettings settings;
  settings.population = 256;
  settings.generations = 4;
  settings.tile_cap = 0.25;
  EvolutionarySearch es(task, settings, cpu_mutation_rules());
  std::vector<State> out = es.run(init, score, 8, {}, rng);
  ASSERT_EQ(out.size(), 8u);
  int favourites = 0;
  for (const auto& s : out) favourites += innermost_tile_key(s) == favourite;
  EXPECT_EQ(favourites, 2) << "a quarter of 8";
}

}  // namespace
}  // namespace loom
