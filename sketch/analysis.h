// Static analysis of stages that the sketch rules and the random annotation
// ask about (Ansor's AccessAnalyzer, computed on the current State's ops so
// that cache-write and rfactor stages are analysed too).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/state.h"
#include "sketch/sketch_task.h"

namespace loom::sketch_analysis {

// Iterator `iter_id` was made from iterator `root_id` by splits and fuses
// (or is it).
bool descends_from(const Stage& st, int iter_id, int root_id);

// A compute stage (not a placeholder) that still has its own loop nest.
bool has_loops(const Stage& st);
bool has_reduce_iter(const Stage& st);
bool is_output(const State& s, int stage);
// The stage's loops were split/fused (it was tiled by a rule).
bool is_tiled(const Stage& st);

// Computation with data reuse (matmul, conv): some input is read with
// indices that miss a spatial axis of extent > 1 — two such inputs, or one
// plus a reduction. Those stages get multi-level tiling.
bool needs_multi_level_tiling(const State& s, int stage);

// The op axis of the stage's innermost spatial loop (its root axis when the
// loop came from a split); -1 without spatial loops.
int innermost_spatial_axis(const Stage& st);

// Inputs worth packing into a local tile: tensors in main memory read once
// by the stage, reused across one of its spatial axes, and indexed in one
// dimension (`dim`) by exactly the stage's innermost spatial axis — the B of
// a matmul (B[k, j], dim 1: rows 4 KB apart become a compact panel), or a
// conv's weights W[k, c, r, s] once the output channel k is innermost (dim
// 0: the packed copy stores k last, so the vector loop reads it contiguously).
// Not a copy stage that already stores `dim` last (see is_data_movement).
struct PackableInput {
  int stage = -1;
  int dim = -1;
};
std::vector<PackableInput> packable_inputs(const State& s, int stage);

// A spatial axis better suited to the vector loop than the innermost one
// (vector_axis_layout): the innermost axis's extent is not a multiple of the
// vector width (a conv's output width 56 = 3 x 16 + 8) or some read strides
// along it (a stride-2 conv's input columns), this one's is a multiple (its
// output channels), and every input that depends on it is indexed by
// exactly this axis and either stores it last or is reused (packed, it is
// the contiguous vector operand; a conv's data is then a broadcast). The
// last such axis; -1 when none.
int better_vector_axis(const SketchTask& task, const State& s, int stage);

// A packed input's copy stage (a local-scope cache read of the CPU packing
// rule), placed inside its reader by the random annotation.
bool is_packing_copy(const State& s, int stage);

// Element-wise/broadcast with every index an axis (plus a constant), axes in
// order, no select and no expensive math call, no reduction: inlining it
// duplicates no work. Conv padding (a select) and transposes do not qualify;
// their location is left to the random annotation.
bool is_strictly_inlineable(const State& s, int stage);

// The stage only moves data: its body is one read of another tensor, every
// index an axis of the stage (plus a constant) or a constant, no axis twice
// (a copy, a transpose, a slice).
bool is_data_movement(const State& s, int stage);

// `reader` reads `producer` (directly) and no read uses the reader's
// innermost spatial axis: in the reader's vector loop each read is one
// element, broadcast across the lanes.
bool reads_without_innermost_axis(const State& s, int reader, int producer);

// A compute stage without a reduction, not an output, in main memory and
// still at root: no rule placed it (a cache stage is a copy made on
// purpose), so an inlining rule may take it.
bool unplaced_compute_stage(const State& s, int stage);

// `consumer` is reached from `producer` through a chain of single-consumer
// stages of the same shape, each reading its producer at exactly its own
// axes in order (e.g. conv -> bias add -> relu). The chain's stages after
// `producer`, ending with `consumer`; empty when there is no such chain.
std::vector<int> elementwise_chain(const State& s, int producer, int consumer);
bool elementwise_match(const State& s, int producer, int consumer);

// The single effective consumer (through inlined stages) if it is
// element-wise matched and the two are not both reductions; -1 otherwise.
int single_elementwise_matched_consumer(const State& s, int stage);

// A local cache-write stage (made by CHW).
bool has_cache_write_stage(const State& s, int stage);

// Products of the extents of the spatial and of the reduce loops.
std::pair<int64_t, int64_t> space_and_reduce_length(const Stage& st);

// Reduction worth factorizing: spatial extent small against both the
// reduction and the parallelism the target wants.
bool needs_rfactor(const SketchTask& task, const State& s, int stage);

// Stages computed at loop `iter_id` of `stage`.
std::vector<int> stages_attached_at(const State& s, int stage, int iter_id);

// Loop `leaf_pos` of `loop_stage` does not move what `reader` reads of
// `producer` (a row reduction read as S[i] inside a loop over j): computed
// inside that loop, `producer` would be computed again, whole, at every
// iteration. `reader` is `loop_stage` itself (-1) or a stage computed inside
// it (a cache-write stage read by its copy-out). False when the reads
// cannot be followed (a reader that does not read `producer` itself).
bool loop_repeats_reads_of(const State& s, int loop_stage, int leaf_pos, int producer, int reader = -1);

// The dimension of `producer` that its single reader's first axis moves:
// the reader's spatial axes in order (extent > 1), the first one that indexes
// producer at all, and it indexes exactly one dimension (a conv's padded
// input: its rows, by the output rows; the output channels index nothing of
// it). -1 when there is none, or the reads cannot be followed (several
// readers, a reader through an inlined stage).
int dim_moved_by_first_reader_axis(const State& s, int producer);

// Where a free stage may be computed: its single consumer, or the common
// root that all its consumers are computed at; -1 when there is none.
int single_consumer_for_location(const State& s, int stage);

}  // namespace loom::sketch_analysis
