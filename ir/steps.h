// The step kinds. Fields are public so that mutations can edit decisions
// (e.g. SplitStep::lengths) and replay.
#pragma once

#include "ir/step.h"

namespace loom {

// ["SP", stage, iter, extent, [lengths], inner_to_outer]
// inner_to_outer=1: loops outer->inner are [ceil(extent/prod), l0, ..., ln-1];
// inner_to_outer=0: [l0, ..., ln-1, ceil(extent/prod)] (lengths are nparts).
struct SplitStep : Step {
  int stage = 0, iter = 0;
  int64_t extent = 0;
  std::vector<int64_t> lengths;
  bool inner_to_outer = true;
  const char* tag() const override { return "SP"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["FSP", stage, iter, src_step, n_split]: split like an earlier SP step, with
// n_split lengths: its first n_split-1 lengths, then the product of the rest.
struct FollowSplitStep : Step {
  int stage = 0, iter = 0, src_step = 0, n_split = 0;
  const char* tag() const override { return "FSP"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
  std::vector<int64_t> lengths(const StateNode& n) const;
};

// ["FFSP", stage, iter, [src_steps], level, factor_or_nparts]: split once by
// the product of the level-th lengths of several SP steps (fused tiles).
struct FollowFusedSplitStep : Step {
  int stage = 0, iter = 0, level = 0;
  std::vector<int> src_steps;
  bool factor_or_nparts = true;
  const char* tag() const override { return "FFSP"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
  int64_t length(const StateNode& n) const;
};

// ["FU", stage, [leaf positions]] (consecutive, same kind)
struct FuseStep : Step {
  int stage = 0;
  std::vector<int> iters;
  const char* tag() const override { return "FU"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["RE", stage, [new order of leaf positions]]
struct ReorderStep : Step {
  int stage = 0;
  std::vector<int> order;
  const char* tag() const override { return "RE"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["AN", stage, iter, "parallel" | "vectorize" | "unroll" | "vthread" | "blockIdx.x" ...]
// A reduce iterator takes only unroll, vectorize, or threadIdx.x (a GPU
// cross-thread reduction).
struct AnnotationStep : Step {
  int stage = 0, iter = 0;
  IterAnnotation annotation = IterAnnotation::kNone;
  const char* tag() const override { return "AN"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["PR", stage, iter, "auto_unroll_max_step$N"]
struct PragmaStep : Step {
  int stage = 0, iter = 0;
  std::string pragma;
  const char* tag() const override { return "PR"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["CA", stage, target_stage, target_iter (leaf position)]
struct ComputeAtStep : Step {
  int stage = 0, target_stage = 0, target_iter = 0;
  const char* tag() const override { return "CA"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["CI", stage]
struct ComputeInlineStep : Step {
  int stage = 0;
  const char* tag() const override { return "CI"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["CR", stage]
struct ComputeRootStep : Step {
  int stage = 0;
  const char* tag() const override { return "CR"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["CHR", stage, scope, [reader stages]]: a copy stage NAME_scope is inserted
// right after `stage`; the readers read it instead.
struct CacheReadStep : Step {
  int stage = 0;
  BufferScope scope = BufferScope::kShared;
  std::vector<int> readers;
  const char* tag() const override { return "CHR"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["CHW", stage, scope]: the computation moves to a new stage NAME_scope
// inserted before `stage`, which becomes a copy out of it.
struct CacheWriteStep : Step {
  int stage = 0;
  BufferScope scope = BufferScope::kLocal;
  const char* tag() const override { return "CHW"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["RF", stage, iter (leaf position of a reduce iterator), factor_iter]: the
// reduction is split in two stages: NAME_rf (inserted before) reduces all
// other reduce iterators and keeps `iter` as a spatial axis at position
// factor_iter; `stage` then reduces over that axis.
struct RfactorStep : Step {
  int stage = 0, iter = 0, factor_iter = 0;
  const char* tag() const override { return "RF"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["SL", stage, [dims, outermost first]]: the stage's buffer stores its
// dimensions in this order (a transposed tile: the axis that a consumer's
// vector loop walks made contiguous). Not for inputs, outputs or inlined
// stages, whose layout is not the schedule's to choose.
struct StorageLayoutStep : Step {
  int stage = 0;
  std::vector<int> dims;
  const char* tag() const override { return "SL"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["FD", stage, dim]: dimensions dim and dim + 1 of an intermediate stage
// become one, of their product extent (its body reads dim as f / inner and
// dim + 1 as f % inner; its readers index it as outer * inner + inner).
// A 56 x 56 feature map is then one axis of 3,136 = 196 x 16 that tiles
// into whole vectors, where 56 leaves a half-empty one in four; the region
// a fused consumer tile needs is then one range, not two whole rows.
// Not for inputs or outputs, whose shape the task fixes.
struct FuseDimsStep : Step {
  int stage = 0, dim = 0;
  const char* tag() const override { return "FD"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

// ["LR", stage]: the layout rewrite of a constant input. `stage` is a copy
// of a constant input (a cache read, computed at root) and the only stage
// that reads the input; it is then computed once outside the program and
// stored in the blocked layout that its reader's loops walk, derived when
// the state is lowered (ir/layout.h), so the layout follows whatever tile
// sizes the schedule ends with.
struct LayoutRewriteStep : Step {
  int stage = 0;
  const char* tag() const override { return "LR"; }
  void apply(StateNode& n) const override;
  nlohmann::json to_json() const override;
  int stage_id() const override { return stage; }
};

BufferScope parse_scope(const std::string& s);  // throws LoomError

}  // namespace loom
