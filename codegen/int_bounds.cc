#include "codegen/int_bounds.h"

#include <algorithm>

namespace loom {

namespace {

constexpr IndexRange kUnknown{-kIntBoundHuge, kIntBoundHuge};

int64_t sat(__int128 v) {
  if (v >= kIntBoundHuge) return kIntBoundHuge;
  if (v <= -kIntBoundHuge) return -kIntBoundHuge;
  return static_cast<int64_t>(v);
}

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

IndexRange hull4(__int128 a, __int128 b, __int128 c, __int128 d) {
  return {sat(std::min(std::min(a, b), std::min(c, d))), sat(std::max(std::max(a, b), std::max(c, d)))};
}

bool unbounded(const IndexRange& b) { return b.min <= -kIntBoundHuge || b.max >= kIntBoundHuge; }

IndexRange div_bound(const IndexRange& a, const IndexRange& b) {
  if (b.min <= 0) return kUnknown;
  // floor(a/b) is monotone in a for b > 0, and monotone in b for fixed-sign a:
  // the extremes sit at the corners.
  return hull4(floordiv(a.min, b.min), floordiv(a.min, b.max), floordiv(a.max, b.min),
               floordiv(a.max, b.max));
}

IndexRange mod_bound(const IndexRange& a, const IndexRange& b) {
  if (b.min <= 0) return kUnknown;
  if (b.min == b.max && !unbounded(a)) {
    int64_t c = b.min;
    if (floordiv(a.min, c) == floordiv(a.max, c))  // one period: identity shift
      return {a.min - floordiv(a.min, c) * c, a.max - floordiv(a.max, c) * c};
  }
  if (a.min >= 0 && a.max < b.min) return a;
  return {0, b.max - 1};
}

}  // namespace

IndexRange int_bound(const Expr& e) {
  if (!e.defined() || e->dtype == DType::kFloat) return kUnknown;
  const auto& n = *e;
  switch (n.kind) {
    case ExprKind::kIntImm: return {sat(n.int_value), sat(n.int_value)};
    case ExprKind::kVar:
      return n.extent > 0 ? IndexRange{0, sat(n.extent - 1)} : kUnknown;
    case ExprKind::kAdd: {
      IndexRange a = int_bound(n.args[0]), b = int_bound(n.args[1]);
      return {sat(__int128{a.min} + b.min), sat(__int128{a.max} + b.max)};
    }
    case ExprKind::kSub: {
      IndexRange a = int_bound(n.args[0]), b = int_bound(n.args[1]);
      return {sat(__int128{a.min} - b.max), sat(__int128{a.max} - b.min)};
    }
    case ExprKind::kMul: {
      IndexRange a = int_bound(n.args[0]), b = int_bound(n.args[1]);
      return hull4(__int128{a.min} * b.min, __int128{a.min} * b.max, __int128{a.max} * b.min,
                   __int128{a.max} * b.max);
    }
    case ExprKind::kDiv: return div_bound(int_bound(n.args[0]), int_bound(n.args[1]));
    case ExprKind::kMod: return mod_bound(int_bound(n.args[0]), int_bound(n.args[1]));
    case ExprKind::kMin: {
      IndexRange a = int_bound(n.args[0]), b = int_bound(n.args[1]);
      return {std::min(a.min, b.min), std::min(a.max, b.max)};
    }
    case ExprKind::kMax: {
      IndexRange a = int_bound(n.args[0]), b = int_bound(n.args[1]);
      return {std::max(a.min, b.min), std::max(a.max, b.max)};
    }
    case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE:
    case ExprKind::kGT: case ExprKind::kGE: case ExprKind::kAnd: case ExprKind::kOr:
    case ExprKind::kNot:
      return {0, 1};
    case ExprKind::kSelect: {
      IndexRange t = int_bound(n.args[1]), f = int_bound(n.args[2]);
      return {std::min(t.min, f.min), std::max(t.max, f.max)};
    }
    case ExprKind::kCast:
      if (n.dtype == DType::kBool) return {0, 1};
      if (n.args[0]->dtype != DType::kFloat) return int_bound(n.args[0]);
      return kUnknown;
    default: return kUnknown;
  }
}

bool provably_non_negative(const Expr& e) { return int_bound(e).min >= 0; }

}  // namespace loom
