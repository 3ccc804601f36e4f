#include "ir/full_tile.h"

#include <functional>
#include <utility>
#include <vector>

#include "ir/simplify.h"

namespace loom {

namespace {

bool uses_any(const Expr& e, const std::set<int64_t>& ids) {
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kVar && ids.count(x->var_id)) found = true;
  });
  return found;
}

// e as signed summands: a + b - (c + d) -> {+a, +b, -c, -d}.
void summands(const Expr& e, int sign, std::vector<std::pair<Expr, int>>& out) {
  if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    summands(e->args[0], sign, out);
    summands(e->args[1], e->kind == ExprKind::kAdd ? sign : -sign, out);
    return;
  }
  out.emplace_back(e, sign);
}

Expr signed_sum(const std::vector<std::pair<Expr, int>>& terms) {
  Expr acc = int_imm(0);
  for (const auto& [t, s] : terms) acc = make_binary(s > 0 ? ExprKind::kAdd : ExprKind::kSub, acc, t);
  return acc;
}

}  // namespace

std::vector<Expr> conjuncts(const Expr& cond) {
  if (cond->kind == ExprKind::kAnd) {
    std::vector<Expr> out = conjuncts(cond->args[0]);
    for (auto& c : conjuncts(cond->args[1])) out.push_back(std::move(c));
    return out;
  }
  return {cond};
}

namespace {

// The comparison with its inner part at its worst (`all`) or best case.
Expr with_inner_extreme(const Expr& comparison, const std::set<int64_t>& inner, bool all) {
  const ExprKind k = comparison->kind;
  if (k != ExprKind::kLT && k != ExprKind::kLE && k != ExprKind::kGT && k != ExprKind::kGE) return Expr();
  const Expr& a = comparison->args[0];
  const Expr& b = comparison->args[1];
  if (a->dtype != DType::kInt || b->dtype != DType::kInt) return Expr();
  // d = a - b compared with 0; its inner summands replaced by an extreme.
  std::vector<std::pair<Expr, int>> terms, outer_terms, inner_terms;
  summands(simplify(a - b), 1, terms);
  for (auto& t : terms) (uses_any(t.first, inner) ? inner_terms : outer_terms).push_back(t);
  const IntBound ib = const_int_bound(simplify(signed_sum(inner_terms)));
  // d < 0 for all inner values: its maximum; for some: its minimum.
  const bool use_max = (k == ExprKind::kLT || k == ExprKind::kLE) == all;
  if (use_max ? ib.max >= IntBound::kPosInf : ib.min <= IntBound::kNegInf) return Expr();
  const Expr outer = simplify(signed_sum(outer_terms));
  return simplify(make_binary(k, outer, int_imm(use_max ? -ib.max : -ib.min)));
}

}  // namespace

Expr holds_for_all(const Expr& comparison, const std::set<int64_t>& inner) {
  return with_inner_extreme(comparison, inner, true);
}

Expr holds_for_some(const Expr& comparison, const std::set<int64_t>& inner) {
  return with_inner_extreme(comparison, inner, false);
}

}  // namespace loom
