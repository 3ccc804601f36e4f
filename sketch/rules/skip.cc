// Skip: leave the stage as it is and derive the one before it. The fallback
// for placeholders and for stages no other rule consumed.
#include "sketch/rules/rules.h"

namespace loom {
namespace {

class SkipStageRule : public SketchRule {
 public:
  std::string name() const override { return "skip"; }
  RuleCondition condition(const SketchTask&, const State&, int) const override {
    return RuleCondition::kApply;
  }
  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    return {{s, stage - 1}};
  }
};

}  // namespace

SketchRulePtr make_skip_stage_rule() { return std::make_unique<SkipStageRule>(); }

}  // namespace loom
