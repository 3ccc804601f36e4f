// CA, CI, CR: where a stage is computed.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

namespace {

// True when `stage` is attached, directly or through other attached stages,
// inside `target`.
bool attached_under(const StateNode& n, int stage, int target) {
  int s = stage;
  for (size_t guard = 0; guard <= n.stages.size(); ++guard) {
    const Stage& st = n.stages[s];
    if (st.compute_at != ComputeAtKind::kIter) return false;
    if (st.attach_stage == target) return true;
    s = st.attach_stage;
  }
  return false;
}

std::vector<int> consumers_of(const StateNode& n, int stage) {
  std::vector<int> out;
  const std::string& name = n.stages[stage].name();
  for (size_t i = 0; i < n.stages.size(); ++i) {
    const Stage& st = n.stages[i];
    if (st.op->is_placeholder) continue;
    bool reads = false;
    visit(st.op->body, [&](const Expr& e) { reads |= e->kind == ExprKind::kLoad && e->name == name; });
    if (!reads) continue;
    if (st.compute_at == ComputeAtKind::kInlined) {
      for (int c : consumers_of(n, static_cast<int>(i))) out.push_back(c);
    } else {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

void check_movable(const StateNode& n, const Stage& st, const char* what) {
  if (st.op->is_placeholder) throw LoomError(std::string("cannot ") + what + " placeholder " + st.name());
  if (n.dag->is_output(st.name())) throw LoomError(std::string("cannot ") + what + " output " + st.name());
  if (st.pretransformed)
    throw LoomError(std::string("cannot ") + what + " " + st.name() + ": it is pre-transformed outside the program");
}

}  // namespace

void ComputeAtStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  check_movable(n, st, "compute_at");
  const Stage& target = stage_at(n, target_stage);
  if (target_stage == stage) throw LoomError("cannot compute a stage at itself");
  if (target.op->is_placeholder || target.compute_at == ComputeAtKind::kInlined || target.pretransformed)
    throw LoomError("target " + target.name() + " has no loops (placeholder, inlined or pre-transformed)");
  int target_id = leaf_at(target, target_iter);
  if (attached_under(n, target_stage, stage))
    throw LoomError("target " + target.name() + " is itself computed inside " + st.name());
  auto consumers = consumers_of(n, stage);
  if (consumers.empty()) throw LoomError(st.name() + " has no consumer to be computed at");
  for (int c : consumers)
    if (c != target_stage && !attached_under(n, c, target_stage))
      throw LoomError("compute_at " + target.name() + " is not an ancestor of consumer " +
                      n.stages[c].name() + " of " + st.name());
  st.compute_at = ComputeAtKind::kIter;
  st.attach_stage = target_stage;
  st.attach_iter = target_id;
}

nlohmann::json ComputeAtStep::to_json() const { return {"CA", stage, target_stage, target_iter}; }

void ComputeInlineStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  check_movable(n, st, "inline");
  if (!st.op->reduce_axes.empty()) throw LoomError("cannot inline reduction " + st.name());
  if (consumers_of(n, stage).empty()) throw LoomError(st.name() + " has no consumer to be inlined into");
  for (const auto& other : n.stages)
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage)
      throw LoomError("cannot inline " + st.name() + ": " + other.name() + " is computed at it");
  st.compute_at = ComputeAtKind::kInlined;
  st.attach_stage = st.attach_iter = -1;
}

nlohmann::json ComputeInlineStep::to_json() const { return {"CI", stage}; }

void ComputeRootStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (st.op->is_placeholder) throw LoomError("cannot compute_root placeholder " + st.name());
  st.compute_at = ComputeAtKind::kRoot;
  st.attach_stage = st.attach_iter = -1;
}

nlohmann::json ComputeRootStep::to_json() const { return {"CR", stage}; }

void register_compute_location_steps(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "CA", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 4, "CA");
    auto s = std::make_shared<ComputeAtStep>();
    s->stage = static_cast<int>(json_int(j, 1, "CA stage"));
    s->target_stage = static_cast<int>(json_int(j, 2, "CA target stage"));
    s->target_iter = static_cast<int>(json_int(j, 3, "CA target iterator"));
    return s;
  });
  register_step_kind(r, "CI", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 2, "CI");
    auto s = std::make_shared<ComputeInlineStep>();
    s->stage = static_cast<int>(json_int(j, 1, "CI stage"));
    return s;
  });
  register_step_kind(r, "CR", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 2, "CR");
    auto s = std::make_shared<ComputeRootStep>();
    s->stage = static_cast<int>(json_int(j, 1, "CR stage"));
    return s;
  });
}

}  // namespace loom
