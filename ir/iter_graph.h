// Arithmetic over a stage's split/fuse relations: loop extents from root
// extents (forward), and root axis values from loop variables (backward).
#pragma once

#include <vector>

#include "ir/state.h"

namespace loom {

// Extents of every iterator (by id) given the extents of the root iterators.
// With nominal root extents this reproduces Iterator::extent; with a smaller
// compute_at region it re-infers the loop extents (split factors stay fixed).
std::vector<int64_t> infer_iter_extents(const Stage& s, const std::vector<int64_t>& root_extents);

// Value of every iterator (by id) given values for the leaves; roots are
// derived through the relations (split: outer*inner_extent + inner; fuse:
// div/mod), using the given extents. Entries for leaves are taken as is.
std::vector<Expr> derive_iter_values(const Stage& s, const std::vector<Expr>& leaf_values,
                                     const std::vector<int64_t>& extents);

// Split children extents for a parent extent.
std::vector<int64_t> split_extents(int64_t extent, const std::vector<int64_t>& lengths,
                                   bool inner_to_outer);

}  // namespace loom
