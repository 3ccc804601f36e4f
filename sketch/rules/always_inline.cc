// Always-inline: a strictly inlineable stage (element-wise/broadcast, no
// reduction, no select, no expensive call) that is not an output, not a
// cache stage and not already attached by a rule is inlined into its
// consumers; nothing else is tried for it. CPU and GPU share it.
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class AlwaysInlineRule : public SketchRule {
 public:
  std::string name() const override { return "always_inline"; }
  RuleCondition condition(const SketchTask&, const State& s, int stage) const override {
    // A cache stage is a copy made on purpose (a packed input, a GPU shared
    // fetch), and a stage a rule already attached has its place.
    if (!unplaced_compute_stage(s, stage)) return RuleCondition::kSkip;
    if (effective_consumers(s, stage).empty()) return RuleCondition::kSkip;
    return is_strictly_inlineable(s, stage) ? RuleCondition::kApplyAndSkipRest : RuleCondition::kSkip;
  }
  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    return {{s.compute_inline(stage), stage - 1}};
  }
};

}  // namespace

SketchRulePtr make_always_inline_rule() { return std::make_unique<AlwaysInlineRule>(); }

}  // namespace loom
