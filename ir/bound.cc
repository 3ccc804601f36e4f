#include "ir/bound.h"

#include "ir/simplify.h"

namespace loom {

namespace {

int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<Region1D> eval(const Expr& e, const std::function<bool(const Expr&)>& fixed) {
  using R = std::optional<Region1D>;
  switch (e->kind) {
    case ExprKind::kIntImm: return Region1D{e, 1};
    case ExprKind::kVar:
      if (fixed(e)) return Region1D{e, 1};
      if (e->extent <= 0) return std::nullopt;
      return Region1D{int_imm(0), e->extent};
    case ExprKind::kAdd: case ExprKind::kSub: {
      R a = eval(e->args[0], fixed), b = eval(e->args[1], fixed);
      if (!a || !b) return std::nullopt;
      if (e->kind == ExprKind::kAdd) return Region1D{simplify(a->base + b->base), a->extent + b->extent - 1};
      return Region1D{simplify(a->base - (b->base + int_imm(b->extent - 1))), a->extent + b->extent - 1};
    }
    case ExprKind::kMul: {
      R a = eval(e->args[0], fixed), b = eval(e->args[1], fixed);
      if (!a || !b) return std::nullopt;
      int64_t c;
      if (b->extent == 1 && is_const_int(b->base, &c)) {
      } else if (a->extent == 1 && is_const_int(a->base, &c)) {
        std::swap(a, b);
      } else if (a->extent == 1 && b->extent == 1) {
        return Region1D{simplify(a->base * b->base), 1};
      } else {
        return std::nullopt;
      }
      if (c == 0) return Region1D{int_imm(0), 1};
      if (c > 0) return Region1D{simplify(a->base * int_imm(c)), (a->extent - 1) * c + 1};
      return Region1D{simplify((a->base + int_imm(a->extent - 1)) * int_imm(c)), (a->extent - 1) * -c + 1};
    }
    case ExprKind::kDiv: {
      int64_t c;
      if (!is_const_int(e->args[1], &c) || c <= 0) return std::nullopt;
      R a = eval(e->args[0], fixed);
      if (!a) return std::nullopt;
      Expr base = simplify(a->base / int_imm(c));
      if (a->extent == 1) return Region1D{base, 1};
      int64_t b0;
      if (is_const_int(a->base, &b0))
        return Region1D{base, fdiv(b0 + a->extent - 1, c) - fdiv(b0, c) + 1};
      int64_t d = known_divisor(a->base);
      if (d != 0 && d % c == 0) return Region1D{base, (a->extent - 1) / c + 1};
      return Region1D{base, (a->extent - 1) / c + 2};
    }
    case ExprKind::kMod: {
      int64_t c;
      if (!is_const_int(e->args[1], &c) || c <= 0) return std::nullopt;
      R a = eval(e->args[0], fixed);
      if (!a) return std::nullopt;
      if (a->extent == 1) return Region1D{simplify(a->base % int_imm(c)), 1};
      int64_t b0;
      if (is_const_int(a->base, &b0)) {
        int64_t lo = b0 - fdiv(b0, c) * c;
        if (lo + a->extent <= c) return Region1D{int_imm(lo), a->extent};
        return Region1D{int_imm(0), c};
      }
      int64_t d = known_divisor(a->base);
      if (d != 0 && d % c == 0 && a->extent <= c) return Region1D{int_imm(0), a->extent};
      return Region1D{int_imm(0), c};
    }
    case ExprKind::kMin: case ExprKind::kMax: {
      R a = eval(e->args[0], fixed), b = eval(e->args[1], fixed);
      if (!a || !b || a->extent != 1 || b->extent != 1) return std::nullopt;
      return Region1D{simplify(e->kind == ExprKind::kMin ? min(a->base, b->base) : max(a->base, b->base)), 1};
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Region1D> infer_region(const Expr& index,
                                     const std::function<bool(const Expr&)>& is_fixed) {
  return eval(simplify(index), is_fixed);
}

std::optional<Region1D> union_region(const Region1D& a, const Region1D& b) {
  int64_t d;
  if (!is_const_int(simplify(b.base - a.base), &d)) return std::nullopt;
  if (d >= 0) return Region1D{a.base, std::max(a.extent, d + b.extent)};
  return Region1D{b.base, std::max(b.extent, -d + a.extent)};
}

}  // namespace loom
