// Full-tile tests for the guards of non-divisible splits.
//
// A guard such as `i.0*6 + i.2 < 577` protects the last, partial tile of a
// split. Inside a tile, some loops (the register tile, the reduction) range
// over their whole extents; the guard holds for all of their values exactly
// when its worst case over them does: `i.0*6 + 5 < 577`, a test on the outer
// variables alone. Lowering evaluates such a test once per tile and runs a
// copy of the tile's loops with the guard removed when it passes, so full
// tiles carry no guards (and vector loops no masks), and tiles wholly
// outside the tensor (a split of a split: 577 rows as 3 x 8 x 24) are skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {

// For a comparison (<, <=, >, >=) of integer expressions: a condition over
// the variables not in `inner` that implies the comparison for every value
// of the variables in `inner` (each over [0, extent)). Undefined when the
// comparison is not of that kind or its inner part is unbounded; a constant
// when no outer variable is involved.
Expr holds_for_all(const Expr& comparison, const std::set<int64_t>& inner);

// The dual: a condition over the outer variables that holds when the
// comparison holds for at least one value of the inner ones (a tile that is
// not empty); undefined or constant as above.
Expr holds_for_some(const Expr& comparison, const std::set<int64_t>& inner);

// The conjuncts of a condition (a && b && c -> {a, b, c}).
std::vector<Expr> conjuncts(const Expr& cond);

// Index-set splitting of a loop over `v` (extent iterations): the length of
// the prefix of its iterations for which some guard conjunct holds whatever
// the `inner` loops do, its test depending on v alone and linearly (the
// outer loop of a non-divisible split: `rk.0*24 + rk.1 < 769` holds for
// rk.0 < 32); 0 when there is none. Guards are `conds[g]`, those with
// `inside[g]` inside the loop; `whole_conds` gets the conditions with the
// conjuncts that hold on the prefix removed.
int64_t whole_iterations(const Var& v, int64_t extent, const std::set<int64_t>& inner,
                         const std::vector<Expr>& conds, const std::vector<bool>& inside,
                         std::vector<Expr>& whole_conds);

// A nest in versions: for each guard inside it (`inside[g]`, at most
// kMaxUnswitchedGuards of them) that some test on the enclosing loops'
// variables implies, `if (test) <nest without it> else if (nonempty) <nest>`
// (a tile of a split of a split may be empty), so at most 4 copies.
// `build_nest` builds the nest under given guard conditions.
inline constexpr size_t kMaxUnswitchedGuards = 2;
Stmt full_tile_versions(const std::set<int64_t>& inner, const std::vector<Expr>& conds,
                        const std::vector<bool>& inside,
                        const std::function<Stmt(const std::vector<Expr>&)>& build_nest);

}  // namespace loom
