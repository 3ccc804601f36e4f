// Vector axis layout (CPU; Loom's addition to Ansor's rules): for a stage
// that will be tiled into a fused consumer, add the alternative in which a
// spatial axis that fills whole vectors (better_vector_axis: a conv's output
// channels, 64 = 4 x 16) replaces the innermost one (its output width, 56 =
// 3 x 16 + 8, one vector in four half empty) as the vector loop. The stage's
// loops are reordered to put that axis innermost (tiling keeps the order
// within each level, so it is innermost in every tile) and its buffer stores
// it last (an SL step), so the register tile's accumulators are whole
// contiguous vectors. The inputs it indexes in another dimension than their
// last are packed with it last (a conv's kernel, channels-last: without
// that, every vector of weights would be a gather); the inputs that do not
// depend on it become broadcast operands — the direct-convolution kernel of
// oneDNN-style libraries, without changing the layout of the program's
// inputs or outputs.
//
// Only stages with a fusible consumer (a cache-write stage or conv -> relu):
// the stage's own buffer is then an intermediate whose layout is ours.
#include "sketch/analysis.h"
#include "sketch/packing.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class VectorAxisLayoutRule : public SketchRule {
 public:
  std::string name() const override { return "vector_axis_layout"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (task.is_gpu || !task.settings.vector_axis_layouts) return RuleCondition::kSkip;
    if (!needs_multi_level_tiling(s, stage) || single_elementwise_matched_consumer(s, stage) < 0 ||
        s.dag().is_output(s.stage(stage).name()) || !s.stage(stage).loops_untouched())
      return RuleCondition::kSkip;
    return better_vector_axis(task, s, stage) < 0 ? RuleCondition::kSkip : RuleCondition::kApply;
  }

  std::vector<SketchState> apply(const SketchTask& task, const State& state, int stage) const override {
    const Stage& st = state.stage(stage);
    const int axis = better_vector_axis(task, state, stage);
    const int n_axes = static_cast<int>(st.op->axes.size());
    const std::vector<int> dims = order_with_last(n_axes, axis);
    std::vector<int> loop_order = dims;  // reduce loops stay innermost, in order
    for (int p = n_axes; p < static_cast<int>(st.leaves.size()); ++p) loop_order.push_back(p);
    State s = state.reorder(stage, loop_order).storage_layout(stage, dims);
    // The inputs indexed by the axis in another dimension than their last
    // would be gathered by the vector loop: they are always packed with it
    // last (better_vector_axis checked that they are reused).
    std::vector<PackableInput> transposed;
    for (const PackableInput& in : packable_inputs(s, stage))
      if (in.dim != static_cast<int>(s.stage(in.stage).op->shape.size()) - 1) transposed.push_back(in);
    s = pack_inputs(s, &stage, transposed);
    // Derived again: its loops are no longer untouched, so this rule skips
    // it; packing of the remaining inputs and tiling take it.
    return {{s, stage}};
  }
};

}  // namespace

SketchRulePtr make_vector_axis_layout_rule() { return std::make_unique<VectorAxisLayoutRule>(); }

}  // namespace loom
