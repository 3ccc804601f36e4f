// Simplification of index arithmetic and constant bounds of integer
// expressions. Variables with a positive extent range over [0, extent).
#pragma once

#include <cstdint>

#include "ir/expr.h"

namespace loom {

struct IntBound {
  static constexpr int64_t kNegInf = INT64_MIN / 4;
  static constexpr int64_t kPosInf = INT64_MAX / 4;
  int64_t min = kNegInf;
  int64_t max = kPosInf;
  bool is_const() const { return min == max; }
  bool bounded() const { return min > kNegInf && max < kPosInf; }
};

// Conservative constant range of an integer (or bool: [0, 1]) expression. A
// variable with extent > 0 lies in [0, extent); variables without one, loads,
// calls, casts from float and float expressions are unbounded. Floor / and %
// by operands with positive bounds are bounded. The backends use it to emit
// floor division/modulo as plain unsigned `/` and `%` where both operands
// are provably non-negative.
IntBound const_int_bound(const Expr& e);
inline bool provably_non_negative(const Expr& e) { return const_int_bound(e).min >= 0; }

// Canonicalizes integer index arithmetic into a sum of terms (so `x*1 + 0`
// disappears and `i*64 + j - i*64` is `j`), folds floor div/mod using the
// bounds of their operands (so split/fuse index math collapses where extents
// allow, including (x/c)*c + x%c -> x), and folds comparisons and selects
// whose outcome the bounds decide. Float arithmetic is only constant-folded.
Expr simplify(const Expr& e);

// Largest c such that every value of e is a multiple of c (gcd of the
// coefficients and constant of its linear form; 0 for the constant 0).
int64_t known_divisor(const Expr& e);

// True when `cond` simplifies to constant true.
bool can_prove(const Expr& cond);

}  // namespace loom
