// The ordered list of GPU sketch rules (Ansor's GPU order, reduced to what
// Loom implements): always-inline for element-wise stages (never cache
// stages or stages a rule already placed); cross-thread reduction (kApply) for reductions with a large
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

std::vector<SketchRulePtr> gpu_sketch_rules() {
  std::vector<SketchRulePtr> rules;
  rules.push_back(make_always_inline_rule());
  rules.push_back(make_gpu_cross_thread_reduction_rule());  // before cache-write, as in Ansor
  rules.push_back(make_add_cache_write_rule());  // kApplyAndSkipRest on GPU
  rules.push_back(make_gpu_multi_level_tiling_rule());
  rules.push_back(make_skip_stage_rule());
  return rules;
}

}  // namespace loom
