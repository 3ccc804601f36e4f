// Each mutation rule produces valid states that still compute the reference
// result; crossover combines parents stage by stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "ir/lower.h"
#include "ir/steps.h"
#include "search/crossover.h"
#include "search/evolutionary_search.h"
#include "search/mutation_rule.h"
#include "sketch/sketch_policy.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

SketchTask small_task(const std::string& workload, const std::string& params, int threads = 2) {
  SketchTask t;
  t.dag = testing::workload(workload, params);
  t.threads = threads;
  return t;
}

// Applies `rule` to many sampled states; returns the mutated ones.
std::vector<State> mutate_samples(const MutationRule& rule, const SketchTask& task, int n) {
  std::mt19937_64 rng(42);
  std::vector<State> states = sample(task, n, rng);
  std::vector<State> out;
  MutationContext ctx{task, rng};
  for (const auto& s : states)
    for (int k = 0; k < 3; ++k)
      if (auto m = rule.apply(s, ctx)) out.push_back(*m);
  return out;
}

void expect_mutations_valid(const std::shared_ptr<const MutationRule>& rule, const SketchTask& task) {
  std::vector<State> mutated = mutate_samples(*rule, task, 12);
  ASSERT_FALSE(mutated.empty()) << rule->name() << " never applied";
  for (size_t i = 0; i < mutated.size(); i += 3)
    EXPECT_EQ(testing::check_with_c_backend(mutated[i]), "") << mutated[i].steps_json().dump();
}

TEST(TileSizeMutation, ProducesCorrectPrograms) {
  expect_mutations_valid(make_tile_size_mutation(), small_task("matmul", R"({"M":24,"N":32,"K":18})"));
}

TEST(TileSizeMutation, ChangesExactlyOneSplitAndKeepsItsProduct) {
  SketchTask task = small_task("matmul", R"({"M":64,"N":64,"K":64})");
  std::mt19937_64 rng(3);
  State s = sample(task, 1, rng)[0];
  MutationContext ctx{task, rng};
  auto m = make_tile_size_mutation()->apply(s, ctx);
  ASSERT_TRUE(m.has_value());
  int changed = 0;
  for (size_t i = 0; i < s.steps().size(); ++i) {
    auto* a = dynamic_cast<const SplitStep*>(s.steps()[i].get());
    auto* b = dynamic_cast<const SplitStep*>(m->steps()[i].get());
    if (!a) continue;
    ASSERT_NE(b, nullptr);
    if (a->lengths != b->lengths) ++changed;
    int64_t pb = 1;
    for (int64_t l : b->lengths) pb *= l;
    EXPECT_LE(pb, b->extent);
  }
  EXPECT_EQ(changed, 1);
  EXPECT_EQ(m->steps().size(), s.steps().size());  // histories never grow
}

TEST(InnermostLengthMutation, ProducesCorrectPrograms) {
  expect_mutations_valid(make_innermost_length_mutation(), small_task("matmul", R"({"M":24,"N":32,"K":18})"));
}

// From a power-of-two tiling of 512 the rows of a register tile reach 6 or
// 7 in one step, tiles the tile-size mutation never makes; a vector loop of
// whole vectors moves by whole vectors; a new tile that does not divide the
// extent sometimes takes the split's other lengths to 1.
TEST(InnermostLengthMutation, MovesOneInnermostLengthByOneOrTwoOrByWholeVectors) {
  SketchTask task = small_task("matmul", R"({"M":512,"N":512,"K":512})", 1);
  std::mt19937_64 rng(7);
  std::vector<State> states = sample(task, 20, rng);
  MutationContext ctx{task, rng};
  int mutated = 0, leaves_the_divisors = 0, flattened_splits = 0;
  for (const State& s : states) {
    auto m = make_innermost_length_mutation()->apply(s, ctx);
    if (!m) continue;
    ++mutated;
    int changed = 0;
    for (size_t i = 0; i < s.steps().size(); ++i) {
      auto* a = dynamic_cast<const SplitStep*>(s.steps()[i].get());
      auto* b = dynamic_cast<const SplitStep*>(m->steps()[i].get());
      if (!a || a->lengths == b->lengths) continue;
      ++changed;
      ASSERT_EQ(a->lengths.size(), b->lengths.size());
      int64_t prod = 1;
      for (int64_t l : b->lengths) prod *= l;
      // The other lengths stay, or all become 1 when the new tile does not
      // divide the extent (one partial tile instead of one per outer block).
      const bool flattened = b->extent % prod != 0 &&
                             std::all_of(b->lengths.begin(), b->lengths.end() - 1, [](int64_t l) { return l == 1; });
      if (flattened) ++flattened_splits;
      for (size_t k = 0; k + 1 < a->lengths.size(); ++k)
        if (!flattened) EXPECT_EQ(a->lengths[k], b->lengths[k]);
      const int64_t from = a->lengths.back(), to = b->lengths.back();
      const int64_t step = from >= task.vector_width && from % task.vector_width == 0 ? task.vector_width : 1;
      EXPECT_TRUE(to == from - 2 * step || to == from - step || to == from + step || to == from + 2 * step)
          << from << " -> " << to;
      EXPECT_LE(prod, b->extent);
      if (b->extent % prod != 0) ++leaves_the_divisors;
    }
    EXPECT_EQ(changed, 1);
  }
  EXPECT_GT(mutated, 10);
  EXPECT_GT(leaves_the_divisors, 0);
  EXPECT_GT(flattened_splits, 0);
}

TEST(AutoUnrollMutation, ProducesCorrectPrograms) {
  expect_mutations_valid(make_auto_unroll_mutation(), small_task("conv2d", R"({"N":1,"C":3,"H":8,"W":8,"K":4})"));
}

TEST(ComputeLocationMutation, ProducesCorrectPrograms) {
  expect_mutations_valid(make_compute_location_mutation(),
                         small_task("conv2d_bias_relu", R"({"N":1,"C":3,"H":8,"W":8,"K":4})"));
}

TEST(ParallelGranularityMutation, ProducesCorrectPrograms) {
  expect_mutations_valid(make_parallel_granularity_mutation(),
                         small_task("dense_bias_relu", R"({"M":16,"N":24,"K":8})", 2));
}

TEST(Crossover, TakesEachStageFromOneParent) {
  SketchTask task = small_task("matmul", R"({"M":32,"N":32,"K":32})");
  std::mt19937_64 rng(5);
  SketchPolicy policy(task);
  // A sketch whose steps act on several stages (e.g. with a cache-write stage).
  const State* multi = nullptr;
  for (const auto& sk : policy.sketches()) {
    std::set<int> stages;
    State annotated = policy.annotate(sk, rng);
    for (const auto& st : annotated.steps()) stages.insert(st->stage_id());
    if (stages.size() >= 2) multi = &sk;
  }
  ASSERT_NE(multi, nullptr);
  const State& sketch = *multi;
  int made = 0;
  for (int attempt = 0; attempt < 50 && made < 5; ++attempt) {
    State a = policy.annotate(sketch, rng), b = policy.annotate(sketch, rng);
    auto child = crossover(a, b, rng);
    if (!child) continue;
    ++made;
    for (size_t i = 0; i < child->steps().size(); ++i) {
      std::string c = child->steps()[i]->to_json().dump();
      EXPECT_TRUE(c == a.steps()[i]->to_json().dump() || c == b.steps()[i]->to_json().dump());
    }
    EXPECT_EQ(testing::check_with_c_backend(*child), "");
  }
  EXPECT_GT(made, 0);
}

TEST(Crossover, RefusesParentsOfDifferentStructure) {
  SketchTask task = small_task("matmul", R"({"M":32,"N":32,"K":32})");
  SketchPolicy policy(task);
  ASSERT_GE(policy.sketches().size(), 2u);
  std::mt19937_64 rng(1);
  State a = policy.annotate(policy.sketches()[0], rng);
  State b = policy.annotate(policy.sketches()[1], rng);
  EXPECT_FALSE(crossover(a, b, rng).has_value());
}

TEST(EvolutionarySearch, ReturnsDistinctUnmeasuredStatesBestFirst) {
  SketchTask task = small_task("matmul", R"({"M":64,"N":64,"K":64})");
  std::mt19937_64 rng(9);
  SearchSettings settings;
  settings.population = 64;
  settings.generations = 2;
  EvolutionarySearch es(task, settings, cpu_mutation_rules());
  std::vector<State> init = sample(task, 64, rng);
  std::unordered_set<std::string> exclude = {state_key(init[0])};
  // A score that prefers larger innermost split lengths (deterministic).
  ScoreFn score = [](const std::vector<State>& states) {
    std::vector<float> out;
    for (const auto& s : states) {
      float v = 0;
      for (const auto& st : s.steps())
        if (auto* sp = dynamic_cast<const SplitStep*>(st.get())) v += static_cast<float>(sp->lengths.back());
      out.push_back(v);
    }
    return out;
  };
  std::vector<State> best = es.run(init, score, 10, exclude, rng);
  ASSERT_EQ(best.size(), 10u);
  std::set<std::string> keys;
  for (const auto& s : best) keys.insert(state_key(s));
  EXPECT_EQ(keys.size(), best.size());
  EXPECT_EQ(keys.count(state_key(init[0])), 0u);
  std::vector<float> scores = score(best);
  for (size_t i = 1; i < scores.size(); ++i) EXPECT_GE(scores[i - 1], scores[i]);
  EXPECT_GT(es.stats().mutations_ok, 0);
}

TEST(EvolutionarySearch, ScoresWithoutAModelMarkStatesThatDoNotLower) {
  auto dag = testing::workload("matmul", R"({"M":12,"N":20,"K":10})");
  State valid = State::initial(dag);
  // C_local is computed at C's j0 loop, but its packed A at j1, a loop that
  // runs after C_local is done: replay accepts each step, lowering refuses.
  State s = valid.cache_write(2, BufferScope::kLocal);  // C_local 2, C 3
  s = s.split(3, 0, {4}).split(3, 2, {5}).reorder(3, {0, 2, 1, 3}).compute_at(2, 3, 1);
  s = s.cache_read(0, BufferScope::kLocal, {s.stage_index("C_local")});
  State invalid = s.compute_at(s.stage_index("A_local"), s.stage_index("C"), 3);
  ASSERT_ANY_THROW(lower(invalid));
  std::mt19937_64 rng(1);
  std::vector<float> scores = random_scores_of_valid({valid, invalid}, rng);
  EXPECT_TRUE(std::isfinite(scores[0]));
  EXPECT_EQ(scores[1], -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace loom
