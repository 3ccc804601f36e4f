#include "ir/simplify.h"

#include <algorithm>

namespace loom {

namespace {

int64_t sat(__int128 v) {
  if (v < IntBound::kNegInf) return IntBound::kNegInf;
  if (v > IntBound::kPosInf) return IntBound::kPosInf;
  return static_cast<int64_t>(v);
}
bool inf(int64_t v) { return v <= IntBound::kNegInf || v >= IntBound::kPosInf; }

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

IntBound mul_bound(IntBound a, IntBound b) {
  if (!a.bounded() || !b.bounded()) {
    if (a.is_const() && a.min == 0) return {0, 0};
    if (b.is_const() && b.min == 0) return {0, 0};
    return {};
  }
  __int128 c[4] = {(__int128)a.min * b.min, (__int128)a.min * b.max, (__int128)a.max * b.min,
                   (__int128)a.max * b.max};
  return {sat(*std::min_element(c, c + 4)), sat(*std::max_element(c, c + 4))};
}

}  // namespace

IntBound const_int_bound(const Expr& e) {
  if (!e.defined() || e->dtype == DType::kFloat) return {};
  switch (e->kind) {
    case ExprKind::kIntImm: return {sat(e->int_value), sat(e->int_value)};
    case ExprKind::kVar:
      if (e->extent > 0) return {0, e->extent - 1};
      return {};
    case ExprKind::kAdd: case ExprKind::kSub: {
      IntBound a = const_int_bound(e->args[0]), b = const_int_bound(e->args[1]);
      if (e->kind == ExprKind::kSub) b = {b.max >= IntBound::kPosInf ? IntBound::kNegInf : -b.max,
                                          b.min <= IntBound::kNegInf ? IntBound::kPosInf : -b.min};
      IntBound r;
      r.min = inf(a.min) || inf(b.min) ? IntBound::kNegInf : sat((__int128)a.min + b.min);
      r.max = inf(a.max) || inf(b.max) ? IntBound::kPosInf : sat((__int128)a.max + b.max);
      return r;
    }
    case ExprKind::kMul:
      return mul_bound(const_int_bound(e->args[0]), const_int_bound(e->args[1]));
    case ExprKind::kDiv: {
      // floor(a / b) for b > 0 is monotone in a, and in b for either sign
      // of a: the extremes are at the corners.
      IntBound a = const_int_bound(e->args[0]), b = const_int_bound(e->args[1]);
      if (b.min <= 0 || !b.bounded()) return {};
      return {inf(a.min) ? IntBound::kNegInf : std::min(floordiv(a.min, b.min), floordiv(a.min, b.max)),
              inf(a.max) ? IntBound::kPosInf : std::max(floordiv(a.max, b.min), floordiv(a.max, b.max))};
    }
    case ExprKind::kMod: {
      IntBound a = const_int_bound(e->args[0]), b = const_int_bound(e->args[1]);
      if (b.min <= 0 || !b.bounded()) return {};
      if (b.is_const() && a.bounded() && floordiv(a.min, b.min) == floordiv(a.max, b.min)) {
        const int64_t shift = floordiv(a.min, b.min) * b.min;  // one period: a shifted
        return {a.min - shift, a.max - shift};
      }
      if (a.min >= 0 && a.max < b.min) return a;
      return {0, b.max - 1};
    }
    case ExprKind::kMin: case ExprKind::kMax: {
      IntBound a = const_int_bound(e->args[0]), b = const_int_bound(e->args[1]);
      if (e->kind == ExprKind::kMin) return {std::min(a.min, b.min), std::min(a.max, b.max)};
      return {std::max(a.min, b.min), std::max(a.max, b.max)};
    }
    case ExprKind::kSelect: {
      IntBound a = const_int_bound(e->args[1]), b = const_int_bound(e->args[2]);
      return {std::min(a.min, b.min), std::max(a.max, b.max)};
    }
    case ExprKind::kCast:
      if (e->dtype == DType::kBool) return {0, 1};
      if (e->args[0]->dtype != DType::kFloat) return const_int_bound(e->args[0]);
      return {};
    default:
      if (e->dtype == DType::kBool) return {0, 1};
      return {};
  }
}

namespace {

// sum(coeff * atom) + constant, over integer atoms.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add(const Expr& atom, int64_t coeff) {
    if (coeff == 0) return;
    for (auto& t : terms) {
      if (structural_equal(t.first, atom)) {
        t.second += coeff;
        return;
      }
    }
    terms.emplace_back(atom, coeff);
  }
  void add(const Linear& o, int64_t scale) {
    constant += o.constant * scale;
    for (const auto& t : o.terms) add(t.first, t.second * scale);
  }
  void prune() {
    terms.erase(std::remove_if(terms.begin(), terms.end(), [](auto& t) { return t.second == 0; }),
                terms.end());
  }
};

Linear to_linear(const Expr& e);

// (x/c)*(c*k) + (x%c)*k  ->  x*k
void fold_div_mod_pairs(Linear& l) {
  for (size_t i = 0; i < l.terms.size(); ++i) {
    const Expr& d = l.terms[i].first;
    if (d->kind != ExprKind::kDiv || l.terms[i].second == 0) continue;
    int64_t c;
    if (!is_const_int(d->args[1], &c) || c <= 0) continue;
    for (size_t j = 0; j < l.terms.size(); ++j) {
      const Expr& m = l.terms[j].first;
      if (m->kind != ExprKind::kMod || !is_const_value(m->args[1], c)) continue;
      if (!structural_equal(m->args[0], d->args[0])) continue;
      int64_t k = l.terms[j].second;
      if (k == 0 || l.terms[i].second != c * k) continue;
      Expr x = d->args[0];
      l.terms[i].second = 0;
      l.terms[j].second = 0;
      l.add(to_linear(x), k);
      fold_div_mod_pairs(l);
      return;
    }
  }
  l.prune();
}

Linear to_linear(const Expr& e) {
  Linear l;
  if (e->kind == ExprKind::kIntImm) {
    l.constant = e->int_value;
  } else if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    l = to_linear(e->args[0]);
    l.add(to_linear(e->args[1]), e->kind == ExprKind::kAdd ? 1 : -1);
  } else if (e->kind == ExprKind::kMul && e->args[1]->kind == ExprKind::kIntImm) {
    l.add(to_linear(e->args[0]), e->args[1]->int_value);
  } else if (e->kind == ExprKind::kMul && e->args[0]->kind == ExprKind::kIntImm) {
    l.add(to_linear(e->args[1]), e->args[0]->int_value);
  } else {
    l.add(e, 1);
  }
  l.prune();
  return l;
}

Expr from_linear(const Linear& l) {
  // Handles are moved, never copied, where they can be: every copy of an
  // Expr is an atomic reference count, and this runs for every index.
  Expr pos, neg;
  for (const auto& [atom, coeff] : l.terms) {
    int64_t a = coeff > 0 ? coeff : -coeff;
    Expr term = a == 1 ? atom : make_binary(ExprKind::kMul, atom, int_imm(a));
    Expr& acc = coeff > 0 ? pos : neg;
    acc = acc.defined() ? make_binary(ExprKind::kAdd, std::move(acc), std::move(term)) : std::move(term);
  }
  const bool any_term = pos.defined() || neg.defined();
  Expr r = pos.defined() ? std::move(pos) : int_imm(0);
  if (neg.defined()) r = make_binary(ExprKind::kSub, std::move(r), std::move(neg));
  if (l.constant > 0) r = any_term ? make_binary(ExprKind::kAdd, std::move(r), int_imm(l.constant)) : int_imm(l.constant);
  if (l.constant < 0) r = any_term ? make_binary(ExprKind::kSub, std::move(r), int_imm(-l.constant)) : int_imm(l.constant);
  return r;
}

Expr simplify_div(const Expr& num, int64_t c) {
  if (c == 1) return num;
  Linear l = to_linear(num);
  Linear q, r;
  for (const auto& [atom, coeff] : l.terms) {
    if (coeff % c == 0) q.add(atom, coeff / c);
    else r.add(atom, coeff);
  }
  q.constant = floordiv(l.constant, c);
  r.constant = l.constant - q.constant * c;
  Expr rest = from_linear(r);
  IntBound b = const_int_bound(rest);
  if (b.bounded() && floordiv(b.min, c) == floordiv(b.max, c)) {
    q.constant += floordiv(b.min, c);
    return from_linear(q);
  }
  Expr d;
  if (rest->kind == ExprKind::kDiv && is_const_int(rest->args[1])) {
    d = make_binary(ExprKind::kDiv, rest->args[0], int_imm(rest->args[1]->int_value * c));
  } else {
    d = make_binary(ExprKind::kDiv, rest, int_imm(c));
  }
  q.add(d, 1);
  return from_linear(q);
}

Expr simplify_mod(const Expr& num, int64_t c) {
  if (c == 1) return int_imm(0);
  Linear l = to_linear(num);
  Linear r;
  for (const auto& [atom, coeff] : l.terms)
    if (coeff % c != 0) r.add(atom, coeff);
  r.constant = l.constant - floordiv(l.constant, c) * c;
  Expr rest = from_linear(r);
  IntBound b = const_int_bound(rest);
  if (b.bounded() && floordiv(b.min, c) == floordiv(b.max, c)) {
    r.constant -= floordiv(b.min, c) * c;
    return from_linear(r);
  }
  return make_binary(ExprKind::kMod, rest, int_imm(c));
}

Expr simplify_compare(ExprKind k, const Expr& a, const Expr& b) {
  // floor(x / c) < d  <=>  x < c * d, and likewise >=, for c > 0: the guard
  // of a split fused loop bounds its outer dimension (h = f / W < H), which
  // is a bound on the fused index itself, with no division.
  int64_t divisor, bound;
  if ((k == ExprKind::kLT || k == ExprKind::kGE) && a->kind == ExprKind::kDiv &&
      is_const_int(a->args[1], &divisor) && divisor > 0 && is_const_int(b, &bound))
    return simplify_compare(k, a->args[0], int_imm(divisor * bound));
  Linear l = to_linear(a);
  l.add(to_linear(b), -1);
  l.prune();
  IntBound d = const_int_bound(from_linear(l));
  switch (k) {
    case ExprKind::kLT: if (d.max < 0) return bool_imm(true); if (d.min >= 0) return bool_imm(false); break;
    case ExprKind::kLE: if (d.max <= 0) return bool_imm(true); if (d.min > 0) return bool_imm(false); break;
    case ExprKind::kGT: if (d.min > 0) return bool_imm(true); if (d.max <= 0) return bool_imm(false); break;
    case ExprKind::kGE: if (d.min >= 0) return bool_imm(true); if (d.max < 0) return bool_imm(false); break;
    case ExprKind::kEQ: if (d.is_const()) return bool_imm(d.min == 0); if (d.min > 0 || d.max < 0) return bool_imm(false); break;
    case ExprKind::kNE: if (d.is_const()) return bool_imm(d.min != 0); if (d.min > 0 || d.max < 0) return bool_imm(true); break;
    default: break;
  }
  return make_binary(k, a, b);
}

Expr simplify_rec(const Expr& e);

Expr simplify_int(const Expr& e, std::vector<Expr>& args) {
  switch (e->kind) {
    case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: {
      Expr x = with_args(e, args);
      if (e->kind == ExprKind::kMul && !is_const_int(args[0]) && !is_const_int(args[1]))
        return x;
      Linear l = to_linear(x);
      fold_div_mod_pairs(l);
      return from_linear(l);
    }
    case ExprKind::kDiv: {
      int64_t c;
      if (is_const_int(args[1], &c) && c > 0) return simplify_div(args[0], c);
      return args[0] / args[1];
    }
    case ExprKind::kMod: {
      int64_t c;
      if (is_const_int(args[1], &c) && c > 0) return simplify_mod(args[0], c);
      return args[0] % args[1];
    }
    case ExprKind::kMin: case ExprKind::kMax: {
      IntBound a = const_int_bound(args[0]), b = const_int_bound(args[1]);
      bool a_le_b = a.max <= b.min, b_le_a = b.max <= a.min;
      if (e->kind == ExprKind::kMin) {
        if (a_le_b) return args[0];
        if (b_le_a) return args[1];
        return min(args[0], args[1]);
      }
      if (a_le_b) return args[1];
      if (b_le_a) return args[0];
      return max(args[0], args[1]);
    }
    default: return Expr();
  }
}

// An integer sum / difference / product by a constant: one node of a linear form.
bool is_linear_node(const Expr& e) {
  if (e->dtype != DType::kInt) return false;
  if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) return true;
  return e->kind == ExprKind::kMul &&
         (e->args[0]->kind == ExprKind::kIntImm || e->args[1]->kind == ExprKind::kIntImm);
}

// Adds scale * e to `l`, walking the whole linear tree at once (its
// non-linear leaves simplified on the way) instead of rebuilding a canonical
// sum at every +: index expressions are long chains of +, and the bottom-up
// rebuild was quadratic in their length and most of lowering's allocations.
void collect_linear(const Expr& e, int64_t scale, Linear& l) {
  if (e->kind == ExprKind::kIntImm) {
    l.constant += e->int_value * scale;
  } else if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    collect_linear(e->args[0], scale, l);
    collect_linear(e->args[1], e->kind == ExprKind::kAdd ? scale : -scale, l);
  } else if (is_linear_node(e)) {  // a product by a constant
    const bool c_first = e->args[0]->kind == ExprKind::kIntImm;
    collect_linear(e->args[c_first ? 1 : 0], scale * e->args[c_first ? 0 : 1]->int_value, l);
  } else {
    Expr atom = simplify_rec(e);
    if (atom->kind == ExprKind::kIntImm || is_linear_node(atom)) l.add(to_linear(atom), scale);
    else l.add(atom, scale);
  }
}

Expr simplify_node(const Expr& e) {
  if (is_linear_node(e)) {
    Linear l;
    collect_linear(e, 1, l);
    l.prune();
    fold_div_mod_pairs(l);
    return from_linear(l);
  }
  std::vector<Expr> args;
  args.reserve(e->args.size());
  for (const auto& a : e->args) args.push_back(simplify_rec(a));
  if (e->dtype == DType::kInt && e->kind != ExprKind::kCast) {
    if (Expr r = simplify_int(e, args); r.defined()) return r;
  }
  if (is_comparison(e->kind) && args[0]->dtype == DType::kInt && args[1]->dtype == DType::kInt)
    return simplify_compare(e->kind, args[0], args[1]);
  switch (e->kind) {
    case ExprKind::kAdd: return args[0] + args[1];
    case ExprKind::kSub: return args[0] - args[1];
    case ExprKind::kMul: return args[0] * args[1];
    case ExprKind::kDiv: return args[0] / args[1];
    case ExprKind::kMin: return min(args[0], args[1]);
    case ExprKind::kMax: return max(args[0], args[1]);
    case ExprKind::kAnd: return args[0] && args[1];
    case ExprKind::kOr: return args[0] || args[1];
    case ExprKind::kNot: return !args[0];
    case ExprKind::kSelect: return select(args[0], args[1], args[2]);
    case ExprKind::kCast: return cast(e->dtype, args[0]);
    default: {
      bool changed = false;
      for (size_t i = 0; i < args.size(); ++i) changed |= !args[i].same_as(e->args[i]);
      return changed ? with_args(e, std::move(args)) : e;
    }
  }
}

Expr simplify_rec(const Expr& e) {
  if (e->args.empty() || __atomic_load_n(&e->simplified, __ATOMIC_RELAXED)) return e;
  Expr r = simplify_node(e);
  __atomic_store_n(&r->simplified, true, __ATOMIC_RELAXED);
  return r;
}

}  // namespace

Expr simplify(const Expr& e) { return simplify_rec(e); }

int64_t known_divisor(const Expr& e) {
  Linear l = to_linear(e);
  auto gcd = [](int64_t a, int64_t b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
  };
  int64_t g = l.constant;
  for (const auto& [atom, coeff] : l.terms) {
    int64_t atom_div = 1;
    if (atom->kind == ExprKind::kMul) {
      int64_t c;
      if (is_const_int(atom->args[1], &c)) atom_div = c;
    }
    g = gcd(g, coeff * atom_div);
  }
  return g < 0 ? -g : g;
}

bool can_prove(const Expr& cond) {
  Expr s = simplify(cond);
  return s->kind == ExprKind::kIntImm && s->int_value != 0;
}

}  // namespace loom
