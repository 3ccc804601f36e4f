// Multi-level tiling with fusion: a stage with data reuse whose single
// consumer is element-wise matched (conv -> relu, or a cache-write stage ->
// its copy-out) is tiled "SSRSRS"; the consumer is split to follow the outer
// `level` spatial levels and the stage is computed at the consumer's last
// loop of that level, so each consumer tile consumes a freshly computed
// producer tile. CPU tries levels 1 and 2 (Ansor).
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"
#include "sketch/tiling.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class MultiLevelTilingWithFusionRule : public SketchRule {
 public:
  std::string name() const override { return "multi_level_tiling_with_fusion"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    const int consumer = single_elementwise_matched_consumer(s, stage);
    // A consumer tiled by a rule of its own (it reads two broadcast
    // tensors) cannot follow this stage's tiles: plain tiling then.
    if (!needs_multi_level_tiling(s, stage) || consumer < 0 || !s.stage(consumer).loops_untouched())
      return RuleCondition::kSkip;
    // A cache-write stage exists only to be fused: no plain tiling for it.
    return has_cache_write_stage(s, stage) || task.is_gpu ? RuleCondition::kApplyAndSkipRest
                                                          : RuleCondition::kApply;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    std::vector<SketchState> out;
    for (const State& fused : tile_into_consumer(s, stage, single_elementwise_matched_consumer(s, stage)))
      out.push_back({fused, stage - 1});
    return out;
  }
};

}  // namespace

SketchRulePtr make_multi_level_tiling_with_fusion_rule() {
  return std::make_unique<MultiLevelTilingWithFusionRule>();
}

}  // namespace loom
