// What the sketches lower to: a cache-write stage computed at its consumer's
// tile runs exactly that tile (its outer tile loops shrink to one iteration
// instead of running guarded-out iterations).
#include <gtest/gtest.h>

#include <random>

#include "ir/lower.h"
#include "ir/steps.h"
#include "sketch/sketch_policy.h"
#include "tests/sketch/sketch_test_util.h"

namespace loom {
namespace {

// Number of loop iterations executed by the statements that store into
// `buffer` (the product of the enclosing loop extents, summed over stores).
int64_t store_iterations(const Stmt& s, const std::string& buffer, int64_t outer = 1) {
  if (!s) return 0;
  if (s->kind == StmtKind::kStore) return s->buffer == buffer ? outer : 0;
  int64_t inner = s->kind == StmtKind::kFor ? outer * s->extent : outer;
  int64_t total = 0;
  for (const Stmt& b : s->body) total += store_iterations(b, buffer, inner);
  return total;
}

TEST(SketchLowering, CacheWriteTileRunsExactlyItsRegion) {
  // matmul 64^3; C_local at C's level-2 tile: i lengths [8, 1, 2], j [4, 2, 4].
  auto task = testing::sketch_task("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
  const State* fused2 = nullptr;
  auto sketches = generate_sketches(task);
  for (const State& s : sketches) {
    int local = s.stage_index("C_local");
    if (local < 0) continue;
    const Stage& c = s.stage(s.stage_index("C"));
    if (c.leaf_position(s.stage(local).attach_iter) == 3) fused2 = &s;
  }
  ASSERT_NE(fused2, nullptr);
  std::vector<StepPtr> steps = fused2->steps();
  int filled = 0;
  for (auto& step : steps) {
    auto* sp = dynamic_cast<const SplitStep*>(step.get());
    if (!sp) continue;
    auto t = std::make_shared<SplitStep>(*sp);
    if (filled == 0) t->lengths = {8, 1, 2};
    if (filled == 1) t->lengths = {4, 2, 4};
    if (filled == 2) t->lengths = {1};
    step = t;
    ++filled;
  }
  State s = State::replay(task.dag, steps);
  LoweredFunc f = lower(s);
  // Every C_local element is initialized once and updated K times, nothing more.
  EXPECT_EQ(store_iterations(f.body, "C_local"), 64 * 64 + 64 * 64 * 64) << to_string(f);
  EXPECT_EQ(f.find_buffer("C_local")->shape, (std::vector<int64_t>{2, 8}));
}

}  // namespace
}  // namespace loom
