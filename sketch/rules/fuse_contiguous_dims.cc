// Fuse contiguous dimensions (CPU; Loom's addition to Ansor's rules): for a
// stage that will be tiled into a fused consumer (a cache-write stage, conv
// -> relu, also through inlined element-wise stages such as a network's
// bias and residual adds) whose innermost dimension does not fill whole vectors (a 56 x 56
// feature map: 56 = 3 x 16 + 8, one vector in four half empty), add the
// alternative in which its last two dimensions are one (an FD step: 3,136 =
// 196 x 16) and the consumer's two loops are fused to match, both then tiled
// as tiling-with-fusion does. The consumer's tile then needs one range of
// the fused dimension, so the register tile runs along the feature map's
// rows and across their ends — the GEMM over pixels that a 1x1, stride-1
// NCHW convolution is.
//
// Only where every address the two stages compute stays affine in the
// fused index, so that no division or remainder by the width is left in an
// inner loop: the last two dimensions are read and written as the rows and
// columns of tensors of that same width (a 1x1 convolution's input and
// output). A padded or strided read (h + ry of a 58-wide input, 2h) keeps
// the alternative out.
#include "ir/simplify.h"
#include "sketch/analysis.h"
#include "sketch/rules/rules.h"
#include "sketch/tiling.h"

namespace loom {
namespace {

using namespace sketch_analysis;

// What the stage reads is an input or a copy of one (a cache read, a
// pre-transformed weight): a computed stage read there (zero padding) would
// be inlined with its conditions in the fused index.
bool reads_only_inputs_or_copies(const State& s, const Expr& body) {
  bool ok = true;
  visit(body, [&](const Expr& x) {
    if (!ok || x->kind != ExprKind::kLoad) return;
    const int i = s.stage_index(x->name);
    if (i < 0) return;
    const OpNode& op = *s.stage(i).op;
    ok = op.is_placeholder || op.body->kind == ExprKind::kLoad;
  });
  return ok;
}

// Every flat address in `body` (its loads and, when `out` is set, the
// stage's own store at `out_index`) is free of division and remainder of
// `f` once simplified.
bool addresses_affine_in(const State& s, const Expr& body, const Var& f, const std::vector<int64_t>* out,
                         const std::vector<Expr>& out_index) {
  auto flat_ok = [&](const std::vector<int64_t>& shape, const std::vector<Expr>& idx) {
    if (shape.size() != idx.size()) return false;
    Expr flat = Expr(int64_t{0});
    for (size_t d = 0; d < idx.size(); ++d) flat = flat * Expr(shape[d]) + idx[d];
    bool ok = true;
    visit(simplify(flat), [&](const Expr& x) {
      if ((x->kind == ExprKind::kDiv || x->kind == ExprKind::kMod) && uses_var(x, f)) ok = false;
    });
    return ok;
  };
  bool ok = true;
  visit(body, [&](const Expr& x) {
    if (!ok || x->kind != ExprKind::kLoad) return;
    const int i = s.stage_index(x->name);
    ok = i >= 0 && flat_ok(s.stage(i).op->shape, x->args);
  });
  return ok && (!out || flat_ok(*out, out_index));
}

// The state with the stage's last two dimensions fused and the consumer's
// two loops fused to match; an undefined state when that is not possible
// or not affine. Between the stage and its consumer there may be
// element-wise stages that will be inlined (a bias add, a residual add):
// their addresses are checked as the consumer's.
State fuse_last_dims(const SketchTask& task, const State& s, int stage, int consumer) {
  const Stage& st = s.stage(stage);
  const int rank = static_cast<int>(st.op->axes.size());
  // Rows that fill whole vectors gain nothing; nor does a single row.
  if (rank < 2 || st.op->shape[rank - 1] % task.vector_width == 0 || st.op->shape[rank - 2] == 1)
    return State();
  if (!st.loops_untouched() || !s.stage(consumer).loops_untouched()) return State();
  const std::vector<int> chain = elementwise_chain(s, stage, consumer);
  if (chain.empty() || !reads_only_inputs_or_copies(s, st.op->body)) return State();
  const int d = rank - 2;
  State fused = s.fuse_dims(stage, d);
  if (!addresses_affine_in(fused, fused.stage(stage).op->body, fused.stage(stage).op->axes[d], nullptr, {}))
    return State();
  // The consumer's loops over the two dimensions, fused: its axes (and
  // those of the stages inlined into it) read as f / inner and f % inner.
  const int64_t inner = st.op->shape[d + 1];
  Var f = make_var("f", st.op->shape[d] * inner);
  for (int c : chain) {
    const OpNode& op = *fused.stage(c).op;
    std::vector<std::pair<Var, Expr>> map = {{op.axes[d], f / Expr(inner)}, {op.axes[d + 1], f % Expr(inner)}};
    std::vector<Expr> out_index;
    for (const auto& a : op.axes) out_index.push_back(substitute(a, map));
    if (!addresses_affine_in(fused, substitute(op.body, map), f, c == consumer ? &op.shape : nullptr, out_index))
      return State();
  }
  return fused.fuse(consumer, {d, d + 1});
}

class FuseContiguousDimsRule : public SketchRule {
 public:
  std::string name() const override { return "fuse_contiguous_dims"; }

  RuleCondition condition(const SketchTask& task, const State& s, int stage) const override {
    if (task.is_gpu || !task.settings.fuse_contiguous_dims) return RuleCondition::kSkip;
    if (!needs_multi_level_tiling(s, stage) || s.dag().is_output(s.stage(stage).name())) return RuleCondition::kSkip;
    const int consumer = single_elementwise_matched_consumer(s, stage);
    if (consumer < 0) return RuleCondition::kSkip;
    return fuse_last_dims(task, s, stage, consumer).defined() ? RuleCondition::kApply : RuleCondition::kSkip;
  }

  std::vector<SketchState> apply(const SketchTask& task, const State& s, int stage) const override {
    const int consumer = single_elementwise_matched_consumer(s, stage);
    std::vector<SketchState> out;
    for (const State& tiled : tile_into_consumer(fuse_last_dims(task, s, stage, consumer), stage, consumer))
      out.push_back({tiled, stage - 1});
    return out;
  }
};

}  // namespace

SketchRulePtr make_fuse_contiguous_dims_rule() { return std::make_unique<FuseContiguousDimsRule>(); }

}  // namespace loom
