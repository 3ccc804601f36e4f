// Transposing copies: a perfect loop nest whose body copies one buffer into
// another, contiguous along one loop on the store side and along another
// on the load side (attention's value_T[d, l] = value[l, h, d]; a
// channels-last accumulator written out as NCHW; a packing copy stored in
// another order). Element by element each load or store strides across
// rows; in square tiles of the vector width the tile is read as whole
// rows, transposed in registers and written as whole rows. Plain C++, no
// LLVM: the analysis any CPU backend can share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/stmt.h"

namespace loom {

struct TransposeNest {
  std::vector<const StmtNode*> loops;  // the nest, outermost first
  Stmt store;                          // the innermost body: buffer[index] = value
  // The load of `value` read across rows: the whole value of a copy, or the
  // one load an element-wise epilogue transforms.
  const ExprNode* transposed = nullptr;
  // The loop along which the store is contiguous (stride 1) and the one
  // along which the transposed load is. The other loops run around the tiles.
  const StmtNode* store_axis = nullptr;
  const StmtNode* load_axis = nullptr;
  // The tile's side: the widest power of two up to the vector width that
  // both axes hold, at least 8 (or the vector width, if that is less).
  int width = 0;
  // The same two axes in nest order.
  const StmtNode* outer() const;
  const StmtNode* inner() const { return outer() == store_axis ? load_axis : store_axis; }
};

// `loop` starts a perfect nest (each loop's body one loop, the innermost's
// one store) that is a transposing copy holding at least one tile of
// `width` (see above; `vector_width` a power of two, as transpose_network
// needs): the store is of a float load from another buffer, both indices
// affine in every loop variable without loads, stride 1 of the store along
// one loop and of the load along another, the load stepping at least a
// tile's width along the store's loop, and no two iterations store to one
// element. With `elementwise`, the stored value may also be an expression
// of one such load and of loads that do not move along the store's loop (a
// conv's bias and ReLU: max(local[w, c] + bias[c], 0)), none of the stored
// buffer: the tile is transposed as loaded, then the expression computed on
// its columns. Parallel loops and bodies with guards or more statements do
// not qualify.
std::optional<TransposeNest> match_transpose_nest(const Stmt& loop, int vector_width, bool elementwise = false);

// A transpose of a w x w tile (w a power of two) in two-input shuffles,
// stage by stage: rows r and r | d (r & d == 0) become shuffle(row r,
// row r | d, low) and shuffle(row r, row r | d, high), a shuffle's lanes
// w.. being the second row's. At the end column j is row column_row[j].
// The network is x86's (unpack floats, then float pairs, within 128-bit
// blocks, then the even and odd 128-bit blocks: each shuffle one
// instruction) where it transposes a w x w tile, else one that exchanges a
// bit of the row and column index per stage; both checked on labels.
struct TransposeStage {
  int d = 0;
  std::vector<int> low, high;
};
struct TransposeNetwork {
  std::vector<TransposeStage> stages;
  std::vector<int> column_row;
};
TransposeNetwork transpose_network(int w);

}  // namespace loom
