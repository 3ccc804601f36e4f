// The derivation rules, one per file in sketch/rules/. Each factory returns a
// stateless rule object; cpu_rules.cc puts them in order.
#pragma once

#include "sketch/sketch_rule.h"

namespace loom {

SketchRulePtr make_skip_stage_rule();
SketchRulePtr make_always_inline_rule();
SketchRulePtr make_inline_broadcast_copy_rule();
SketchRulePtr make_multi_level_tiling_rule();
SketchRulePtr make_multi_level_tiling_with_fusion_rule();
SketchRulePtr make_add_cache_write_rule();
SketchRulePtr make_add_rfactor_rule();
SketchRulePtr make_pack_reused_input_rule();
SketchRulePtr make_vector_axis_layout_rule();
SketchRulePtr make_fuse_contiguous_dims_rule();
SketchRulePtr make_rewrite_constant_layout_rule();

}  // namespace loom
