// Bound inference: the region of a tensor that a loop nest touches.
//
// An index expression is evaluated over intervals: variables that are fixed at
// the point of interest (loops outside the attach point) stay symbolic, every
// other loop variable ranges over [0, extent). The result is a symbolic start
// and a constant extent, so compute_at buffers get static shapes.
#pragma once

#include <functional>
#include <optional>

#include "ir/expr.h"

namespace loom {

struct Region1D {
  Expr base;           // first index touched (symbolic in the fixed variables)
  int64_t extent = 0;  // number of indices, an upper bound
};

// `is_fixed(var)` tells whether a variable is fixed (symbolic); otherwise it
// must have a positive extent and ranges over it. Returns nullopt when the
// extent is not a compile-time constant (the caller then takes the whole
// dimension).
std::optional<Region1D> infer_region(const Expr& index,
                                     const std::function<bool(const Expr&)>& is_fixed);

// Smallest region covering both, if their starts differ by a constant.
std::optional<Region1D> union_region(const Region1D& a, const Region1D& b);

}  // namespace loom
