// The ordered list of GPU sketch rules (Ansor's GPU order, reduced to what
// Loom implements): always-inline for element-wise stages that are not
// cache stages; cross-thread reduction (kApply) for reductions with a large
// reduce extent against their spatial extent — the reduce loop bound to
// threadIdx.x, the spatial loops (of the stage, or of the element-wise
// consumer it is computed at) to blockIdx.x (cross_thread_reduction.cc);
// cache-write (local) for a stage with reuse and no fusible consumer
// (always on GPU, the register tile); multi-level tiling with fusion
// "SSSRRSRS" with shared-memory cache reads and thread binding; skip.
// Stages no rule binds are bound to blockIdx/threadIdx by the GPU
// annotation (one thread per output element).
#include "sketch/analysis.h"
#include "sketch/gpu/gpu_rules.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

// Always-inline, but never a cache stage or an attached stage (a shared
// cache-read stage is a plain copy that the CPU rule would inline).
class GpuInlineRule : public SketchRule {
 public:
  GpuInlineRule() : inner_(make_always_inline_rule()) {}
  std::string name() const override { return "gpu_always_inline"; }
  RuleCondition condition(const SketchTask& t, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    if (st.scope != BufferScope::kGlobal || st.compute_at != ComputeAtKind::kRoot) return RuleCondition::kSkip;
    return inner_->condition(t, s, stage);
  }
  std::vector<SketchState> apply(const SketchTask& t, const State& s, int stage) const override {
    return inner_->apply(t, s, stage);
  }

 private:
  SketchRulePtr inner_;
};

}  // namespace

std::vector<SketchRulePtr> gpu_sketch_rules() {
  std::vector<SketchRulePtr> rules;
  rules.push_back(std::make_unique<GpuInlineRule>());
  rules.push_back(make_gpu_cross_thread_reduction_rule());  // before cache-write, as in Ansor
  rules.push_back(make_add_cache_write_rule());  // kApplyAndSkipRest on GPU
  rules.push_back(make_gpu_multi_level_tiling_rule());
  rules.push_back(make_skip_stage_rule());
  return rules;
}

}  // namespace loom
