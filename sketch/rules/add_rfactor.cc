// Add rfactor: a reduction whose spatial extent is small (against its
// reduction and the target's parallelism) fuses its reduce loops into one,
// splits it and factors one part out as a spatial axis of a new stage
// NAME_rf, which can then be parallelized (outer part factored) or
// vectorized (inner part factored, moved innermost). Both sketches are made;
// the split length is filled by the random annotation.
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"

namespace loom {
namespace {

using namespace sketch_analysis;

class AddRfactorRule : public SketchRule {
 public:
  std::string name() const override { return "add_rfactor"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    return needs_rfactor(task, s, stage) && !has_cache_write_stage(s, stage) ? RuleCondition::kApply
                                                                              : RuleCondition::kSkip;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& s, int stage) const override {
    // Fuse all reduce loops (they are innermost in an untransformed stage).
    const Stage& st = s.stage(stage);
    std::vector<int> reduce_pos;
    int n_space = 0;
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      if (st.iters[st.leaves[p]].kind == IterKind::kReduce) reduce_pos.push_back(static_cast<int>(p));
      else ++n_space;
    }
    State base = reduce_pos.size() > 1 ? s.fuse(stage, reduce_pos) : s;
    const int fused_pos = reduce_pos.front();
    base = base.split(stage, fused_pos, {1});  // loops: outer (fused_pos), inner (fused_pos + 1)
    std::vector<SketchState> out;
    for (int factored : {fused_pos, fused_pos + 1}) {
      State t = base.rfactor(stage, factored, n_space);  // NAME_rf now at `stage`
      const int rf = stage;
      if (factored == fused_pos + 1) {
        // Inner part factored: its axis (at n_space) goes innermost so that
        // it can be vectorized.
        const size_t n = t.stage(rf).leaves.size();
        std::vector<int> order;
        for (size_t p = 0; p < n; ++p)
          if (static_cast<int>(p) != n_space) order.push_back(static_cast<int>(p));
        order.push_back(n_space);
        t = t.reorder(rf, order);
      }
      out.push_back({t, rf - 1});
    }
    return out;
  }
};

}  // namespace

SketchRulePtr make_add_rfactor_rule() { return std::make_unique<AddRfactorRule>(); }

}  // namespace loom
