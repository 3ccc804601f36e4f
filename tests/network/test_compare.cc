// compare_network's rounds: each engine's turn of back-to-back runs, a
// round's time the median of the runs after the turn's first, the first run
// kept apart; speed ratios are medians of per-round ratios.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/error.h"
#include "network/compare.h"
#include "tests/graph/graph_builder.h"

namespace loom {
namespace {

graph::Graph small_dense() {
  graph::testing::GraphBuilder b;
  b.input("x", {2, 8}).pattern_constant("w", {8, 4}, 1);
  b.node("matmul", {"x", "w"}, "h").node("relu", {"h"}, "y");
  return b.build({"y"});
}

TEST(CompareNetwork, ARoundTimesTheMedianOfTheTurnsRunsAfterTheFirst) {
  const graph::Graph g = small_dense();
  graph::NetworkExecutor ex(g, {1});
  ComparisonOptions o;
  o.rounds = 2;
  o.runs = 4;
  NetworkComparison c = compare_network(g, ex, {}, o);
  ASSERT_EQ(c.loom.turns.size(), 2u);
  ASSERT_EQ(c.loom.s().size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const std::vector<double>& runs = c.loom.turns[r];
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(c.loom.first_s()[r], runs[0]);
    std::vector<double> rest(runs.begin() + 1, runs.end());
    std::sort(rest.begin(), rest.end());
    EXPECT_EQ(c.loom.s()[r], rest[1]);
  }
}

TEST(CompareNetwork, WithOneRunARoundTimesThatRun) {
  const graph::Graph g = small_dense();
  graph::NetworkExecutor ex(g, {1});
  ComparisonOptions o;
  o.rounds = 1;
  o.runs = 1;
  NetworkComparison c = compare_network(g, ex, {}, o);
  ASSERT_EQ(c.loom.s().size(), 1u);
  EXPECT_EQ(c.loom.s()[0], c.loom.first_s()[0]);
}

TEST(CompareNetwork, ChecksTheOutputsAgainstTheInterpreterWithoutBaselines) {
  const graph::Graph g = small_dense();
  graph::NetworkExecutor ex(g, {2});
  ComparisonOptions o;
  o.threads = 2;
  o.rounds = 1;
  o.runs = 2;
  o.check = true;
  NetworkComparison c = compare_network(g, ex, {}, o);
  ASSERT_EQ(c.checks.size(), 1u);
  EXPECT_EQ(c.checks[0].against, "the reference interpreter");
  EXPECT_TRUE(c.outputs_match());
}

TEST(CompareNetwork, RefusesARoundWithoutRuns) {
  const graph::Graph g = small_dense();
  graph::NetworkExecutor ex(g, {1});
  ComparisonOptions o;
  o.runs = 0;
  EXPECT_THROW(compare_network(g, ex, {}, o), LoomError);
}

TEST(NetworkComparison, SpeedRatiosAreMediansOfPerRoundRatios) {
  NetworkComparison c;
  c.loom.turns = {{2.0, 1.0}, {2.0, 2.0}, {2.0, 4.0}};  // round times 1, 2, 4; first runs 2, 2, 2
  c.baselines.push_back({"ONNX Runtime", "", {{1.0, 3.0}, {8.0, 3.0}, {4.0, 3.0}}});
  EXPECT_DOUBLE_EQ(c.speed_ratio("ONNX Runtime"), 1.5);            // of 3, 1.5, 0.75
  EXPECT_DOUBLE_EQ(c.first_run_speed_ratio("ONNX Runtime"), 2.0);  // of 0.5, 4, 2
  EXPECT_EQ(c.speed_ratio("PyTorch"), 0.0);                        // did not run
}

}  // namespace
}  // namespace loom
