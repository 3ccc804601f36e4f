// The blocked layout of a pre-transformed constant input (Ansor's layout
// rewrite). A schedule may store a weight in exactly the order its tiled
// loops read it: every dimension is cut into pieces, value (x_d / stride) %
// extent, and the pieces of all dimensions are stored row-major in the
// order of the loops that walk them. The transform from the input's own
// row-major layout runs once, outside the timed region (the worker before
// it times, the executor when it loads a network, the exported header's
// NAME_pretransform_ARG before the first call); the kernel reads the
// blocked buffer through its argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace loom {

struct LayoutPiece {
  int dim = 0;          // dimension of the source tensor
  int64_t stride = 1;   // of the source index along `dim`
  int64_t extent = 1;   // values this piece takes
};

struct BlockedLayout {
  std::string source;                  // the constant input it is made from
  std::vector<int64_t> source_shape;
  std::vector<LayoutPiece> pieces;     // storage order, outermost first

  // Elements of the blocked buffer (>= the source's: the last block of a
  // dimension the tiles do not divide is padded with zeros).
  int64_t size() const;
  std::vector<int64_t> shape() const;  // the pieces' extents
  // Flat offset in the blocked buffer of source element `indices`.
  Expr index(const std::vector<Expr>& indices) const;
  // Writes the blocked copy of `src` (the source's row-major data) into
  // `dst` of size() elements, padding with zeros.
  void apply(const float* src, float* dst) const;
  std::vector<float> apply(const float* src) const;
  // "[in1: k/16%4, c/1%64, r, s, k%16]": readable, for loop-nest dumps.
  std::string to_string() const;
  // A C function `void NAME(const float* src, float* dst)` doing apply().
  std::string c_function(const std::string& name) const;
};

// A mixed-radix layout that a dimension's pieces must form: sorted by
// stride, each piece's stride is the product of the extents of the pieces
// below it, the smallest stride is 1 and the largest piece covers the
// dimension. Lowering checks every layout it derives.
bool is_valid_layout(const BlockedLayout& layout);

}  // namespace loom

namespace loom {

struct StmtNode;

// The layout rewrite inside lowering. Lowering leaves the loads of a
// pre-transformed copy multi-dimensional; this derives its layout from the
// loops around the first such load in `body`: each index is split into its
// linear terms (a loop variable, or a div/mod of one, times a stride), the
// terms of one dimension that form a mixed radix become its pieces, and the
// pieces are ordered as their loops nest, outermost first (a dimension whose
// terms do not form one stays whole, at its outermost loop). Every load is
// then rewritten to the flat offset, which simplification folds back to the
// loop variables where the tiles divide the extents.
BlockedLayout derive_blocked_layout(const std::shared_ptr<const StmtNode>& body, const std::string& tensor,
                                    const std::string& source, const std::vector<int64_t>& shape);
std::shared_ptr<const StmtNode> flatten_blocked_loads(const std::shared_ptr<const StmtNode>& body,
                                                      const std::string& tensor, const BlockedLayout& layout);

}  // namespace loom
