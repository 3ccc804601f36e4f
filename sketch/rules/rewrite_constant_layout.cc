// Rewrite the layout of constant inputs (CPU; Ansor's layout rewrite): a
// stage that will be tiled for reuse (a conv, a dense layer, a matmul with
// constant weights) reads each constant input it alone reads through a copy
// computed once outside the program (an LR step), stored in the blocked
// layout its tiled loops walk. The layout is derived when the state is
// lowered, so it follows the tile sizes that annotation and mutation pick;
// the copy costs nothing in the timed region. There is no unrewritten
// branch: reading a weight in loop order is never slower than reading it
// in its given order, and the network executor transforms it once at load.
//
// Runs before the other tiling rules and derives the stage again, so
// rfactor, cache write and tiling see the copy as the stage's input (and
// pack_reused_input, which packs only tensors in main memory, leaves it).
#include <algorithm>

#include "sketch/analysis.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

// The constant inputs that `stage` reads and no other stage does.
std::vector<std::string> rewritable_constants(const State& s, int stage) {
  std::vector<std::string> out;
  const ComputeDAG& dag = s.dag();
  for (const TensorAccess& access : collect_accesses(s.stage(stage).op->body)) {
    const std::string& tensor = access.tensor;
    if (!dag.is_input(tensor) || !dag.is_constant(tensor)) continue;
    if (std::find(out.begin(), out.end(), tensor) != out.end()) continue;
    if (direct_consumers(s, s.stage_index(tensor)) == std::vector<int>{stage}) out.push_back(tensor);
  }
  return out;
}

class RewriteConstantLayoutRule : public SketchRule {
 public:
  std::string name() const override { return "rewrite_constant_layout"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (task.is_gpu || !needs_multi_level_tiling(s, stage) || is_tiled(s.stage(stage))) return RuleCondition::kSkip;
    return rewritable_constants(s, stage).empty() ? RuleCondition::kSkip : RuleCondition::kApplyAndSkipRest;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& state, int stage) const override {
    State s = state;
    const std::string reader = s.stage(stage).name();
    for (const std::string& input : rewritable_constants(state, stage)) {
      const int t = s.stage_index(input);
      s = s.cache_read(t, BufferScope::kLocal, {s.stage_index(reader)}).layout_rewrite(t + 1);
    }
    return {{s, s.stage_index(reader)}};
  }
};

}  // namespace

SketchRulePtr make_rewrite_constant_layout_rule() { return std::make_unique<RewriteConstantLayoutRule>(); }

}  // namespace loom
