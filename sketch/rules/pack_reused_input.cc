// Pack a reused input (CPU; Loom's addition to Ansor's rules): for a stage
// that will be tiled into a fused consumer (a cache-write stage, conv ->
// relu), add the alternative in which each input from packable_inputs()
// (the B of a matmul) is read through a local cache-read stage. The copy's
// location is left to the random annotation and the compute-location
// mutation: computed at the first reduce tile loop, it is the packed panel
// of BLIS-style GEMMs (a K-tile x N-tile block, contiguous, reused by every
// row of the M tile), which ends the 4 KB-stride cache-set conflicts of
// power-of-two row lengths; inlined, it is the plain sketch again. When
// the innermost axis indexes another dimension than the input's last (a
// dense layer's W[j, k]), the copy stores that dimension last (see
// sketch/packing.h).
//
// Only stages with a fusible consumer: the plain tiling of the same stage
// (no cache write) would otherwise get a second, duplicate packed branch
// through its cache-write stage.
#include "sketch/analysis.h"
#include "sketch/packing.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class PackReusedInputRule : public SketchRule {
 public:
  std::string name() const override { return "pack_reused_input"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (task.is_gpu || !task.settings.pack_reused_inputs) return RuleCondition::kSkip;
    if (!needs_multi_level_tiling(s, stage) || single_elementwise_matched_consumer(s, stage) < 0)
      return RuleCondition::kSkip;
    return packable_inputs(s, stage).empty() ? RuleCondition::kSkip : RuleCondition::kApply;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& state, int stage) const override {
    // The stage is derived again: its inputs are now local, so this rule
    // skips it and the tiling rules take it.
    State s = pack_inputs(state, &stage, packable_inputs(state, stage));
    return {{s, stage}};
  }
};

}  // namespace

SketchRulePtr make_pack_reused_input_rule() { return std::make_unique<PackReusedInputRule>(); }

}  // namespace loom
