// The ordered list of sketch rules per target.
#include "ir/error.h"
#include "sketch/gpu/gpu_rules.h"
#include "sketch/rules/rules.h"

namespace loom {

std::vector<SketchRulePtr> cpu_sketch_rules() {
  // Order matters: a rule answering kApplyAndSkipRest hides every rule after
  // it for that stage, and kApply rules add branches before the later rules
  // add theirs. This is Ansor's CPU order: an element-wise stage is inlined
  // and nothing else; rfactor and cache-write add alternatives to plain
  // tiling; tiling-with-fusion must come before plain tiling (which always
  // ends the stage); skip is the fallback for stages no rule consumed.
  // Right after it, Loom inlines a copy that a tiled stage reads as a
  // broadcast (its reader, later in the DAG, is already tiled).
  // Loom adds three rules just before tiling-with-fusion, each branching a
  // stage that already has its fusible consumer (after cache-write made
  // one): the contiguous-dimension fusion, whose branch is tiled at once
  // (it needs the stage's loops untouched, so it comes first); then two
  // whose branch is derived again from the top of the list: the vector
  // axis layout (it decides the innermost axis), then input packing (which
  // packs the inputs that innermost axis indexes; the fusion branches a
  // packed stage too). Before all of
  // them but inlining, the layout rewrite of constant inputs: it replaces a
  // weight by its pre-transformed copy and derives the stage again, so the
  // later rules tile the stage as if it read the copy.
  std::vector<SketchRulePtr> rules;
  rules.push_back(make_always_inline_rule());
  rules.push_back(make_inline_broadcast_copy_rule());
  rules.push_back(make_rewrite_constant_layout_rule());
  rules.push_back(make_add_rfactor_rule());
  rules.push_back(make_add_cache_write_rule());
  rules.push_back(make_fuse_contiguous_dims_rule());
  rules.push_back(make_vector_axis_layout_rule());
  rules.push_back(make_pack_reused_input_rule());
  rules.push_back(make_multi_level_tiling_with_fusion_rule());
  rules.push_back(make_multi_level_tiling_rule());
  rules.push_back(make_skip_stage_rule());
  return rules;
}

std::vector<SketchRulePtr> sketch_rules_for(const SketchTask& task) {
  if (task.is_gpu) return gpu_sketch_rules();
  return cpu_sketch_rules();
}

}  // namespace loom
