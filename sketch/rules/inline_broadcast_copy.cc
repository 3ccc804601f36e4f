// Inline a broadcast copy (CPU; Loom's addition to Ansor's rules): a
// stage that only moves data (its body one read of another tensor at the
// stage's axes, in any order: a transpose), read by a stage that is
// multi-level tiled without the reader's innermost spatial axis, is inlined
// and nothing else is tried for it. The reader's vector loop then reads one
// element per iteration of the copy's source (a broadcast), so a copy in
// any layout would buy nothing and cost a pass over the tensor: attention's
// query transpose feeding Q x K^T, a matmul whose A is read transposed.
// Ansor leaves a transpose to the random compute location, which inlines it
// in one draw of (loops + 2).
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class InlineBroadcastCopyRule : public SketchRule {
 public:
  std::string name() const override { return "inline_broadcast_copy"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (task.is_gpu || !task.settings.inline_broadcast_copies) return RuleCondition::kSkip;
    if (!unplaced_compute_stage(s, stage) || !is_data_movement(s, stage)) return RuleCondition::kSkip;
    const std::vector<int> consumers = effective_consumers(s, stage);
    if (consumers.size() != 1) return RuleCondition::kSkip;
    const int reader = consumers[0];
    if (!is_tiled(s.stage(reader)) && !needs_multi_level_tiling(s, reader)) return RuleCondition::kSkip;
    return reads_without_innermost_axis(s, reader, stage) ? RuleCondition::kApplyAndSkipRest
                                                          : RuleCondition::kSkip;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    return {{s.compute_inline(stage), stage - 1}};
  }
};

}  // namespace

SketchRulePtr make_inline_broadcast_copy_rule() { return std::make_unique<InlineBroadcastCopyRule>(); }

}  // namespace loom
