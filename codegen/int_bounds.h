// Conservative integer bounds of index expressions.
//
// Used by the backends to decide when floor division/modulo can be emitted as
// plain truncating `/` and `%` (both operands provably non-negative).
#pragma once

#include <cstdint>

#include "ir/expr.h"

namespace loom {

// Inclusive range [min, max]. Magnitudes at or beyond kIntBoundHuge mean
// "unbounded" on that side; results are saturated there.
struct IndexRange {
  int64_t min;
  int64_t max;
};

constexpr int64_t kIntBoundHuge = int64_t{1} << 62;

// Bounds an integer (or bool) expression. A kVar with extent > 0 lies in
// [0, extent-1]; variables without an extent, loads, calls and casts from
// float are unbounded. Handles constants, + - *, floor / and % (by operands
// with positive bounds), min, max, select, comparisons and logic (in [0,1]).
IndexRange int_bound(const Expr& e);

// True when e is provably >= 0.
bool provably_non_negative(const Expr& e);

}  // namespace loom
