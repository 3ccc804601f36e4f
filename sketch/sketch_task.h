// What sketch generation and random annotation need to know about a tuning
// task: the DAG, the target's parallelism and vector width, and the knobs of
// the random annotation (SketchSettings, defaults from Ansor's CPU policy
// unless noted).
#pragma once

#include <memory>
#include <vector>

#include "ir/compute_dag.h"

namespace loom {

struct SketchSettings {
  // Innermost tile length of a split is at most this (Ansor:
  // max_innermost_split_factor = 64): inner tiles are register/vector tiles.
  int max_innermost_split_factor = 64;
  // The innermost spatial loops fused and vectorized have at most this many
  // iterations (Ansor uses 16; Loom's LLVM backend emits 16-float vectors in
  // chunks, so up to 4 chunks of AVX-512 stay cheap).
  int max_vectorize_size = 64;
  // auto_unroll_max_step values drawn for stages with reduce loops (Ansor CPU).
  std::vector<int> auto_unroll_options = {0, 16, 64, 512};
  // Outer loops of a root stage are fused and parallelized until their
  // extent exceeds threads * parallel_chunks_per_thread (Ansor: cores * 16).
  int parallel_chunks_per_thread = 16;
  // Probability that a split gets lengths whose product does not divide the
  // extent (guarded tails, tested once per tile: ir/full_tile.h). Ansor never
  // does this. Extents of at least two vectors that are not a multiple of the
  // vector width (1000, 577) have no divisible tiling of whole vectors, so
  // they get such lengths more often.
  double non_divisible_split_probability = 0.05;
  double poorly_divisible_split_probability = 0.5;
  // sample() gives up after n * this many attempts (a tiny space may hold
  // fewer than n distinct programs).
  int max_attempts_per_state = 50;
  // CPU: also derive sketches in which a reused input is packed into a local
  // tile (sketch/rules/pack_reused_input.cc; not an Ansor rule). Off gives
  // Ansor's sketch set exactly.
  bool pack_reused_inputs = true;
  // CPU: also derive sketches in which a spatial axis filling whole vectors
  // replaces an innermost axis that does not as the vector loop, stored last
  // (sketch/rules/vector_axis_layout.cc; not an Ansor rule).
  bool vector_axis_layouts = true;
  // CPU: also derive sketches in which a stage's last two dimensions are one
  // when its innermost does not fill whole vectors and every address stays
  // affine (sketch/rules/fuse_contiguous_dims.cc; not an Ansor rule).
  bool fuse_contiguous_dims = true;
  // Inline a copy or transpose that a tiled stage reads without its
  // innermost spatial axis (a broadcast operand) instead of drawing its
  // location (sketch/rules/inline_broadcast_copy.cc; not an Ansor rule).
  bool inline_broadcast_copies = true;
};

struct SketchTask {
  std::shared_ptr<const ComputeDAG> dag;
  // Threads the program may use. Ansor's rules compare parallel extents with
  // the core count (rfactor when the spatial extent is <= 16 * cores, parallel
  // granularity), so the number of sketches depends on it.
  int threads = 1;
  // Floats per vector register of the target (the tuner sets it from
  // Target::vector_width, make_sketch_task in search/search_policy.h).
  int vector_width = 16;
  bool is_gpu = false;    // GPU rules and annotation (sketch/gpu/)
  SketchSettings settings;
};

}  // namespace loom
