// Multi-level tiling: a stage with data reuse (matmul, conv) is tiled with
// the CPU structure "SSRSRS" (Ansor §4.1): two outer spatial levels for
// parallelism and cache locality, an outer reduce level, a middle spatial
// level, the inner reduce level, and an innermost spatial level for vectors.
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"
#include "sketch/tiling.h"

namespace loom {
namespace {

class MultiLevelTilingRule : public SketchRule {
 public:
  std::string name() const override { return "multi_level_tiling"; }
  RuleCondition condition(const SketchTask&, const State& s, int stage) const override {
    return sketch_analysis::needs_multi_level_tiling(s, stage) ? RuleCondition::kApplyAndSkipRest
                                                               : RuleCondition::kSkip;
  }
  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    std::vector<int> split_steps;
    return {{multi_level_tile(s, stage, kCpuTilingStructure, &split_steps), stage - 1}};
  }

  static constexpr const char* kCpuTilingStructure = "SSRSRS";
};

}  // namespace

SketchRulePtr make_multi_level_tiling_rule() { return std::make_unique<MultiLevelTilingRule>(); }

}  // namespace loom
