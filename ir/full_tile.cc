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

namespace {

// A comparison whose sides differ by a*v + b (constants a, b) and that uses
// no other variable: its truth over v's values is one interval.
bool depends_linearly_on(const Expr& test, const Var& v) {
  if (!is_comparison(test->kind)) return false;
  bool other = false;
  visit(test, [&](const Expr& x) { other |= x->kind == ExprKind::kVar && x->var_id != v->var_id; });
  if (other) return false;
  const Expr d = simplify(test->args[0] - test->args[1]);
  int64_t b = 0, b1 = 0, rest = 0;
  if (!is_const_int(simplify(substitute(d, {{v, int_imm(0)}})), &b)) return false;
  if (!is_const_int(simplify(substitute(d, {{v, int_imm(1)}})), &b1)) return false;
  return is_const_int(simplify(d - (v * int_imm(b1 - b) + int_imm(b))), &rest) && rest == 0;
}

}  // namespace

int64_t whole_iterations(const Var& v, int64_t extent, const std::set<int64_t>& inner,
                         const std::vector<Expr>& conds, const std::vector<bool>& inside,
                         std::vector<Expr>& whole_conds) {
  auto holds_at = [&](const Expr& test, int64_t value) { return can_prove(substitute(test, {{v, int_imm(value)}})); };
  int64_t whole = 0;
  std::vector<std::vector<Expr>> kept(conds.size());
  for (size_t g = 0; g < conds.size(); ++g) {
    if (!inside[g]) continue;
    for (const Expr& c : conjuncts(conds[g])) {
      Expr t = holds_for_all(c, inner);
      if (t.defined() && depends_linearly_on(t, v) && holds_at(t, 0) && !holds_at(t, extent - 1)) {
        if (whole == 0) {  // the first candidate sets the split: binary search
          int64_t lo = 1, hi = extent - 1;  // holds at lo - 1, not at hi
          while (lo < hi) {
            const int64_t mid = (lo + hi) / 2;
            if (holds_at(t, mid)) lo = mid + 1; else hi = mid;
          }
          whole = lo;
        }
        if (holds_at(t, whole - 1)) continue;  // linear: holds on all of [0, whole), dropped
      }
      kept[g].push_back(c);
    }
  }
  if (whole == 0) return 0;
  for (size_t g = 0; g < conds.size(); ++g) {
    if (!inside[g]) continue;
    Expr c = bool_imm(true);
    for (const Expr& x : kept[g]) c = c && x;
    whole_conds[g] = simplify(c);
  }
  return whole;
}

Stmt full_tile_versions(const std::set<int64_t>& inner, const std::vector<Expr>& conds,
                        const std::vector<bool>& inside,
                        const std::function<Stmt(const std::vector<Expr>&)>& build_nest) {
  struct Unswitch {
    size_t guard;
    Expr test;       // on the enclosing loops' variables: the guard always holds
    Expr nonempty;   // ... it holds somewhere
    Expr remainder;  // conjuncts the test does not imply
  };
  std::vector<Unswitch> unswitches;
  for (size_t g = 0; g < conds.size() && unswitches.size() < kMaxUnswitchedGuards; ++g) {
    if (!inside[g]) continue;
    Expr test = bool_imm(true), nonempty = bool_imm(true), remainder = bool_imm(true);
    bool any = false;
    for (const Expr& c : conjuncts(conds[g])) {
      Expr t = holds_for_all(c, inner);
      if (t.defined() && !(is_const_int(t) && !t->int_value)) {
        test = test && t;
        any = true;
      } else {
        remainder = remainder && c;
      }
      // Conjuncts are tested apart, so this is necessary, not sufficient.
      Expr some = holds_for_some(c, inner);
      if (some.defined()) nonempty = nonempty && some;
    }
    if (any) unswitches.push_back({g, simplify(test), simplify(nonempty), simplify(remainder)});
  }
  std::function<Stmt(size_t, std::vector<Expr>)> version = [&](size_t u, std::vector<Expr> cs) -> Stmt {
    if (u == unswitches.size()) return build_nest(cs);
    Stmt general = version(u + 1, cs);
    cs[unswitches[u].guard] = unswitches[u].remainder;
    Stmt full = version(u + 1, cs);
    if (!(is_const_int(unswitches[u].nonempty) && unswitches[u].nonempty->int_value))
      general = make_if(unswitches[u].nonempty, general);
    return make_if(unswitches[u].test, full, general);
  };
  return version(0, conds);
}

}  // namespace loom
