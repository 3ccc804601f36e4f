// Add cache write: a stage with data reuse but no fusible consumer computes
// into a new local stage NAME_local (inserted before it, at the same index)
// and itself becomes an element-wise copy-out; the local stage is derived
// next, where tiling-with-fusion tiles it into the copy-out.
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class AddCacheWriteRule : public SketchRule {
 public:
  std::string name() const override { return "add_cache_write"; }
  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (needs_multi_level_tiling(s, stage) && single_elementwise_matched_consumer(s, stage) < 0)
      return task.is_gpu ? RuleCondition::kApplyAndSkipRest : RuleCondition::kApply;
    return RuleCondition::kSkip;
  }
  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    return {{s.cache_write(stage, BufferScope::kLocal), stage}};
  }
};

}  // namespace

SketchRulePtr make_add_cache_write_rule() { return std::make_unique<AddCacheWriteRule>(); }

}  // namespace loom
