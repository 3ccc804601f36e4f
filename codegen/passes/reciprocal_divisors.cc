#include "codegen/passes/reciprocal_divisors.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "codegen/passes/lane_analysis.h"

namespace loom {

namespace {

bool has_loop(const Stmt& s) {
  bool found = false;
  visit_stmt(s, [&](const Stmt& x) { found = found || x->kind == StmtKind::kFor; });
  return found;
}

std::set<std::string> stored_buffers(const Stmt& s) {
  std::set<std::string> out;
  visit_stmt(s, [&](const Stmt& x) {
    if (x->kind == StmtKind::kStore) out.insert(x->buffer);
  });
  return out;
}

// The divisor is the same in every iteration of the loop over `var_id`
// whose body stores `written`.
bool invariant(const Expr& b, int64_t var_id, const std::set<std::string>& written) {
  if (uses_var_id(b, var_id)) return false;
  bool ok = true;
  visit(b, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad && written.count(e->name)) ok = false;
  });
  return ok;
}

Stmt rewrite(const Stmt& s) {
  if (!s) return s;
  if (s->kind == StmtKind::kFor && !has_loop(s->body[0])) {
    const int64_t var_id = s->loop_var->var_id;
    const std::set<std::string> written = stored_buffers(s);
    bool changed = false;
    std::function<Expr(const Expr&)> fold = [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::kDiv || x->dtype != DType::kFloat) return Expr();
      const Expr& b = x->args[1];
      if (!invariant(b, var_id, written)) return Expr();
      changed = true;
      Expr reciprocal = b->kind == ExprKind::kFloatImm ? float_imm(1.0 / b->float_value)
                                                        : make_binary(ExprKind::kDiv, float_imm(1.0), b);
      return make_binary(ExprKind::kMul, mutate(x->args[0], fold), reciprocal);
    };
    Stmt body = map_exprs(s->body[0], [&](const Expr& e) { return mutate(e, fold); });
    return changed ? map_children(s, [&](const Stmt&) { return body; }) : s;
  }
  return map_children(s, rewrite);
}

}  // namespace

LoweredFunc multiply_by_reciprocals(const LoweredFunc& f) {
  LoweredFunc out = f;
  out.body = rewrite(f.body);
  return out;
}

}  // namespace loom
