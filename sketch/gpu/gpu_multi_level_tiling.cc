// GPU multi-level tiling with fusion (Ansor §4.1, GPU): a stage P with data
// reuse whose single consumer C is element-wise matched (a cache-write
// stage's copy-out, or conv -> bias -> relu) is tiled "SSSRRSRS":
//   S0 blockIdx | S1 vthread | S2 threadIdx | R0 | R1 | S3 | R2 | S4
// C follows the three outer spatial levels; each level's loops are fused
// and bound (blockIdx.x, vthread, threadIdx.x); P is computed at C's
// threadIdx loop (its buffer is the thread's register tile). Every tensor P
// reads gets a shared-memory cache-read stage computed at P's last R0 loop,
// fetched cooperatively: its loops fused, split into [rest, threads,
// vector] (threads following the thread level of P's tiles, FFSP; vector
// length filled by the GPU annotation) with threads bound to threadIdx.x.
#include <set>

#include "ir/error.h"
#include "ir/steps.h"
#include "sketch/analysis.h"
#include "sketch/gpu/gpu_rules.h"
#include "sketch/tiling.h"

namespace loom {
namespace {

using namespace sketch_analysis;

constexpr const char* kGpuStructure = "SSSRRSRS";

std::vector<std::string> tensors_read(const Stage& st) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  visit(st.op->body, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad && seen.insert(e->name).second) out.push_back(e->name);
  });
  return out;
}

State fuse_all(const State& s, int stage, int first, int count) {
  if (count <= 1) return s;
  std::vector<int> span;
  for (int p = first; p < first + count; ++p) span.push_back(p);
  return s.fuse(stage, span);
}

class GpuMultiLevelTilingRule : public SketchRule {
 public:
  std::string name() const override { return "gpu_multi_level_tiling_with_fusion"; }

  RuleCondition condition(const SketchTask&, const State& s, int stage) const override {
    if (!needs_multi_level_tiling(s, stage) || single_elementwise_matched_consumer(s, stage) < 0)
      return RuleCondition::kSkip;
    return RuleCondition::kApplyAndSkipRest;
  }

  std::vector<SketchState> apply(const SketchTask&, const State& state, int stage) const override {
    State s = state;
    const std::string p_name = s.stage(stage).name();
    const std::string c_name = s.stage(single_elementwise_matched_consumer(s, stage)).name();
    // Shared cache-read stages for every tensor P reads (each inserted right
    // after its producer, before P).
    std::vector<std::string> shared;
    for (const std::string& t : tensors_read(s.stage(stage))) {
      const int ts = s.stage_index(t);
      if (ts < 0 || s.stage(ts).compute_at == ComputeAtKind::kInlined) continue;
      s = s.cache_read(ts, BufferScope::kShared, {s.stage_index(p_name)});
      shared.push_back(s.stage(ts + 1).name());
    }
    int p = s.stage_index(p_name);
    std::vector<int> split_steps;
    s = multi_level_tile(s, p, kGpuStructure, &split_steps);
    const int n_space = static_cast<int>(split_steps.size());
    const int n_reduce = static_cast<int>(s.stage(p).op->reduce_axes.size());
    int c = s.stage_index(c_name);
    s = follow_tiling(s, c, split_steps, 3);
    // Consumer loops: [S0 x n][S1 x n][S2 x n][rest x n] -> fuse each level.
    for (int level = 0; level < 3; ++level) s = fuse_all(s, c, level, n_space);
    s = s.annotate(c, 0, IterAnnotation::kBlockX);
    s = s.annotate(c, 1, IterAnnotation::kVThread);
    s = s.annotate(c, 2, IterAnnotation::kThreadX);
    p = s.stage_index(p_name);
    s = s.compute_at(p, c, 2);
    // Shared stages at P's last outer-reduce (R0) loop.
    const int r0_last = 3 * n_space + n_reduce - 1;
    for (const std::string& name : shared) {
      p = s.stage_index(p_name);
      const int sh = s.stage_index(name);
      s = s.compute_at(sh, p, n_reduce > 0 ? r0_last : 3 * n_space - 1);
      const int n_loops = static_cast<int>(s.stage(sh).leaves.size());
      s = fuse_all(s, sh, 0, n_loops);
      s = s.split(sh, 0, {1});  // [rest, vector]: the vector length is a hole
      std::vector<int> srcs = split_steps;
      s = s.follow_fused_split(sh, 0, srcs, 1, true);  // [rest, threads, vector]
      s = s.annotate(sh, 1, IterAnnotation::kThreadX);
      s = s.annotate(sh, 2, IterAnnotation::kVectorize);
    }
    return {{s, s.stage_index(p_name) - 1}};
  }
};

}  // namespace

SketchRulePtr make_gpu_multi_level_tiling_rule() { return std::make_unique<GpuMultiLevelTilingRule>(); }

}  // namespace loom
