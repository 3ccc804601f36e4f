// Reduction terms that read zero padding are skipped, for both CPU backends.
//
// A convolution's padded input is a buffer written once as
//   pad[i0, i1, ...] = select(in_bounds(i0, i1, ...), data[...], 0)
// and read by the reduction `acc = acc + pad[...] * w` (or w * pad[...]).
// Near the borders a third of a 3-tap axis reads zeros: a 3x3x3 conv3d
// over 8 x 28 x 28 does 13% of its multiply-adds on padding, a 3x3 conv
// over 16 x 16 8%. oneDNN skips them; so does Loom. Each conjunct of
// in_bounds, rewritten in the reading loops' variables, bounds the
// innermost loop it depends on (the tap) by a position computed from loops
// outside it. Where all of a tap loop's bounds depend on one position, the
// body of the innermost loop that position depends on is copied once per
// run of positions with the same valid taps (at most 8 runs; the
// copies chosen by `if (position <= last of the run)`), each with the tap
// loop over its valid taps only. No guard lands inside the loops that
// accumulate a register tile, so the accumulators stay in registers, and
// no loop emitted unrolled is copied; the tap loop must not be in a vector
// loop and must hold only the reduction.
// Results are those of the padded computation for finite weights (a
// skipped term is +0 * w).
#pragma once

#include "ir/stmt.h"

namespace loom {

LoweredFunc skip_zero_padding_taps(const LoweredFunc& f);

}  // namespace loom
