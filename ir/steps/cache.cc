// CHR and CHW: cache stages that copy a tensor into, or compute it in, a
// buffer of another scope.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

namespace {

std::string unique_stage_name(const StateNode& n, const std::string& base) {
  auto taken = [&](const std::string& s) {
    for (const auto& st : n.stages) if (st.name() == s) return true;
    return false;
  };
  if (!taken(base)) return base;
  for (int k = 1;; ++k)
    if (!taken(base + std::to_string(k))) return base + std::to_string(k);
}

}  // namespace

void CacheReadStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (st.compute_at == ComputeAtKind::kInlined) throw LoomError("cannot cache_read inlined " + st.name());
  if (readers.empty()) throw LoomError("cache_read needs at least one reader");
  const std::string orig = st.name();
  const std::string name = unique_stage_name(n, orig + "_" + buffer_scope_name(scope));
  for (int r : readers) {
    const Stage& rs = stage_at(n, r);
    if (!op_reads(rs.op, orig)) throw LoomError("stage " + rs.name() + " does not read " + orig);
  }
  Tensor copy = compute_with_axes(
      st.op->shape, [&](const std::vector<Var>& v) { return load(orig, v); }, name);
  for (int r : readers) {
    Stage& rs = n.stages[r];
    Expr body = mutate(rs.op->body, [&](const Expr& e) -> Expr {
      if (e->kind == ExprKind::kLoad && e->name == orig) {
        auto node = copy_node(e);
        node->name = name;
        node->producer = nullptr;
        return Expr(std::move(node));
      }
      return Expr();
    });
    rs.op = rebuild_op(rs.op, rs.op->name, body);
  }
  shift_stage_indices(n, stage + 1, 1);
  n.stages.insert(n.stages.begin() + stage + 1, make_stage(copy.op(), scope));
}

nlohmann::json CacheReadStep::to_json() const {
  return {"CHR", stage, buffer_scope_name(scope), readers};
}

void CacheWriteStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (st.op->is_placeholder || st.compute_at == ComputeAtKind::kInlined)
    throw LoomError("cannot cache_write " + st.name() + " (placeholder or inlined)");
  if (!st.relations.empty())
    throw LoomError("cache_write of " + st.name() + " must come before its loops are transformed");
  check_nothing_attached(n, stage, "cache_write");
  if (!st.storage_order.empty())
    throw LoomError("cache_write of " + st.name() + " must come before its storage layout is set");
  const std::string name = unique_stage_name(n, st.name() + "_" + buffer_scope_name(scope));
  Op local = rebuild_op(st.op, name, st.op->body);
  std::vector<Expr> idx(st.op->axes.begin(), st.op->axes.end());
  Op copy = rebuild_op(st.op, st.op->name, load(name, idx));
  replace_with_producer(n, stage, copy, make_stage(local, scope));
}

nlohmann::json CacheWriteStep::to_json() const {
  return {"CHW", stage, buffer_scope_name(scope)};
}

void register_cache_steps(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "CHR", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 4, "CHR");
    auto s = std::make_shared<CacheReadStep>();
    s->stage = static_cast<int>(json_int(j, 1, "CHR stage"));
    s->scope = parse_scope(json_str(j, 2, "CHR scope"));
    for (int64_t v : json_int_list(j, 3, "CHR readers")) s->readers.push_back(static_cast<int>(v));
    return s;
  });
  register_step_kind(r, "CHW", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 3, "CHW");
    auto s = std::make_shared<CacheWriteStep>();
    s->stage = static_cast<int>(json_int(j, 1, "CHW stage"));
    s->scope = parse_scope(json_str(j, 2, "CHW scope"));
    return s;
  });
}

}  // namespace loom
