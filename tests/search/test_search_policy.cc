// A search round: besides the model's picks and random samples, neighbours
// of the best measured programs and other tasks' programs chosen without
// the model; nothing whose loop nest was measured already.
#include <gtest/gtest.h>

#include "ir/lower.h"
#include "ir/steps.h"
#include "measure/task.h"
#include "search/evolutionary_search.h"
#include "search/search_policy.h"

namespace loom {
namespace {

std::vector<const SplitStep*> splits_of(const State& s) {
  std::vector<const SplitStep*> out;
  for (const auto& step : s.steps())
    if (auto* sp = dynamic_cast<const SplitStep*>(step.get())) out.push_back(sp);
  return out;
}

// True when `b` is `a` with one split's innermost length changed.
bool innermost_neighbour(const State& a, const State& b) {
  if (a.steps().size() != b.steps().size()) return false;
  auto sa = splits_of(a), sb = splits_of(b);
  if (sa.size() != sb.size()) return false;
  int changed = 0;
  for (size_t i = 0; i < sa.size(); ++i) {
    if (sa[i]->lengths == sb[i]->lengths) continue;
    if (sa[i]->lengths.size() != sb[i]->lengths.size()) return false;
    for (size_t k = 0; k + 1 < sa[i]->lengths.size(); ++k)
      if (sa[i]->lengths[k] != sb[i]->lengths[k]) return false;
    ++changed;
  }
  return changed == 1;
}

// The model never proposes a tile it ranks low (a 6- or 7-row register
// tile of a 512-wide GEMM, which no divisor of 512 gives): measured
// neighbours of the best programs reach it whatever the model says.
TEST(SearchPolicy, ARoundMeasuresNeighboursOfTheBestMeasuredPrograms) {
  auto task = std::make_shared<Task>(
      Task::make("matmul", {{"M", 512}, {"N", 512}, {"K", 512}}, Target::parse("cpu -threads=1")));
  SearchSettings settings;
  settings.population = 64;
  settings.generations = 1;
  SearchPolicy policy(task, make_sketch_task(*task, SketchSettings{}), settings, cpu_mutation_rules(), 3);
  std::mt19937_64 rng(3);
  std::vector<State> measured = sample(policy.sketches().task(), 8, rng);
  std::vector<double> costs;
  for (size_t i = 0; i < measured.size(); ++i) costs.push_back(1.0 + static_cast<double>(i));
  policy.add_measured(measured, costs);
  std::mt19937_64 score_rng(5);
  auto batch = policy.next_batch(64, [&](const std::vector<State>& s) { return random_scores_of_valid(s, score_rng); });
  int neighbours = 0;
  for (const State& b : batch)
    for (int k = 0; k < 4; ++k) neighbours += innermost_neighbour(measured[k], b);
  EXPECT_GE(neighbours, 1);
  for (const State& b : batch)
    for (const State& m : measured) EXPECT_NE(state_key(b), state_key(m));  // nothing measured twice
}

SearchPolicy small_matmul_policy(int transfer_per_round) {
  auto task = std::make_shared<Task>(
      Task::make("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, Target::parse("cpu -threads=1")));
  SearchSettings settings;
  settings.population = 32;
  settings.generations = 1;
  settings.transfer_per_round = transfer_per_round;
  return SearchPolicy(task, make_sketch_task(*task, SketchSettings{}), settings, cpu_mutation_rules(), 3);
}

std::vector<State> programs(SearchPolicy& policy, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return sample(policy.sketches().task(), n, rng);
}

std::vector<State> batch_of(SearchPolicy& policy, const std::vector<State>& transferred) {
  std::mt19937_64 score_rng(5);
  return policy.next_batch(
      16, [&](const std::vector<State>& s) { return random_scores_of_valid(s, score_rng); }, transferred);
}

TEST(SearchPolicy, TransferredProgramsLeadTheBatchUpToTheSetting) {
  SearchPolicy policy = small_matmul_policy(2);
  std::vector<State> transferred = programs(policy, 3, 11);
  std::vector<State> batch = batch_of(policy, transferred);
  ASSERT_GE(batch.size(), 2u);
  EXPECT_EQ(state_key(batch[0]), state_key(transferred[0]));
  EXPECT_EQ(state_key(batch[1]), state_key(transferred[1]));
  EXPECT_NE(state_key(batch[2]), state_key(transferred[2]));
}

TEST(SearchPolicy, ATransferredProgramMeasuredAlreadyIsPassedOver) {
  SearchPolicy policy = small_matmul_policy(2);
  std::vector<State> transferred = programs(policy, 3, 11);
  policy.add_measured({transferred[0]}, {1.0});
  std::vector<State> batch = batch_of(policy, transferred);
  ASSERT_GE(batch.size(), 2u);
  EXPECT_EQ(state_key(batch[0]), state_key(transferred[1]));
  EXPECT_EQ(state_key(batch[1]), state_key(transferred[2]));
}

// An auto-unroll step of 0 unrolls nothing: other steps, the same loop
// nest, the same program. Measuring it again would only time it again.
TEST(SearchPolicy, AProgramWhoseLoopNestWasMeasuredUnderOtherStepsIsPassedOver) {
  SearchPolicy policy = small_matmul_policy(2);
  State plain = State::from_json(policy.sketches().task().dag, nlohmann::json::array());
  State no_unroll = plain.pragma(2, 0, "auto_unroll_max_step$0");
  ASSERT_NE(state_key(plain), state_key(no_unroll));
  ASSERT_EQ(loop_nest_key(plain), loop_nest_key(no_unroll));
  policy.add_measured({plain}, {1.0});
  std::vector<State> transferred = programs(policy, 2, 11);
  std::vector<State> batch = batch_of(policy, {no_unroll, transferred[0], transferred[1]});
  ASSERT_GE(batch.size(), 2u);
  EXPECT_EQ(state_key(batch[0]), state_key(transferred[0]));
  EXPECT_EQ(state_key(batch[1]), state_key(transferred[1]));
  for (const State& b : batch) EXPECT_NE(loop_nest_key(b), loop_nest_key(plain));
}

TEST(SearchPolicy, NoTransferWhenTheSettingIsZero) {
  SearchPolicy policy = small_matmul_policy(0);
  std::vector<State> transferred = programs(policy, 1, 11);
  EXPECT_NE(state_key(batch_of(policy, transferred)[0]), state_key(transferred[0]));
}

}  // namespace
}  // namespace loom
