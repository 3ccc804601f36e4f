// LR: a constant input's copy, pre-transformed outside the program.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

void LayoutRewriteStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  const std::string what = "cannot rewrite the layout of " + st.name();
  if (st.op->is_placeholder || st.compute_at != ComputeAtKind::kRoot || n.dag->is_output(st.name()))
    throw LoomError(what + ": only a copy computed at root can be pre-transformed");
  // The copy is `C(i, j, ...) = P(i, j, ...)` of a constant input P.
  const Expr& body = st.op->body;
  bool copy = body->kind == ExprKind::kLoad && body->args.size() == st.op->axes.size() && st.op->reduce_axes.empty();
  for (size_t d = 0; copy && d < body->args.size(); ++d)
    copy = body->args[d]->kind == ExprKind::kVar && body->args[d]->var_id == st.op->axes[d]->var_id;
  if (!copy) throw LoomError(what + ": it is not a copy of an input");
  const std::string& source = body->name;
  if (!n.dag->is_input(source) || !n.dag->is_constant(source))
    throw LoomError(what + ": " + source + " is not a constant input");
  for (const Stage& other : n.stages) {
    if (&other == &st || other.op->is_placeholder) continue;
    bool reads = false;
    visit(other.op->body, [&](const Expr& e) { reads |= e->kind == ExprKind::kLoad && e->name == source; });
    if (reads) throw LoomError(what + ": " + other.name() + " reads " + source + " too");
  }
  for (const Stage& other : n.stages)
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage)
      throw LoomError(what + ": " + other.name() + " is computed inside it");
  st.pretransformed = true;
}

nlohmann::json LayoutRewriteStep::to_json() const { return {"LR", stage}; }

void register_layout_rewrite_step(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "LR", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 2, "LR");
    auto s = std::make_shared<LayoutRewriteStep>();
    s->stage = static_cast<int>(json_int(j, 1, "LR stage"));
    return s;
  });
}

}  // namespace loom
