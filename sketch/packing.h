// Packing a stage's input into a local copy (a cache read), shared by the
// rules that pack: pack_reused_input and vector_axis_layout.
#pragma once

#include <string>
#include <vector>

#include "ir/state.h"
#include "sketch/analysis.h"

namespace loom {

// 0..ndim-1 in order, except `last`, which comes last: the storage (and
// loop) order that makes dimension `last` contiguous.
std::vector<int> order_with_last(int ndim, int last);

// Reads each input through a local copy. A copy whose `dim` is not the
// input's last dimension stores `dim` last (an SL step) and its loops follow
// that order, so it writes — and the reader's vector loop reads — contiguous
// lanes. Returns the state and the reader's new index in `*stage`.
State pack_inputs(const State& state, int* stage, const std::vector<sketch_analysis::PackableInput>& inputs);

}  // namespace loom
