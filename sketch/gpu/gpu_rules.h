// GPU sketch rules and random annotation (sketch/gpu/). The ordered rule
// list is gpu_sketch_rules() (gpu_rules.cc), selected by sketch_rules_for()
// when SketchTask::is_gpu; random_annotate dispatches to
// gpu_random_annotate for GPU tasks.
#pragma once

#include "sketch/annotation.h"
#include "sketch/sketch_rule.h"

namespace loom {

SketchRulePtr make_gpu_multi_level_tiling_rule();
SketchRulePtr make_gpu_cross_thread_reduction_rule();  // cross_thread_reduction.cc
// steps[i] is the thread-count split of a cross-thread reduction (an SP
// with one length directly followed by binding its inner loop to
// threadIdx.x): the GPU annotation fills it with a thread count.
bool is_cross_thread_split(const std::vector<StepPtr>& steps, size_t i);
std::vector<SketchRulePtr> gpu_sketch_rules();

// GPU target limits the annotation respects (H100/H200 class, sm_90).
struct GpuLimits {
  int max_threads_per_block = 1024;
  int64_t max_shared_bytes_per_block = 48 * 1024;
  int max_vthread = 8;            // product of the vthread level (Ansor: 8)
  int64_t max_local_floats = 128;  // per-thread register tile of a tiled stage
};

// Fills a GPU sketch: tile sizes within the limits (resampled until the
// thread count, vthread count, register tile and shared memory fit), the
// thread counts of cross-thread reductions,
// vector lengths of cooperative fetches, compute locations of free stages
// (inlined, else at root), blockIdx/threadIdx binding of the root stages
// not yet bound, and the auto-unroll pragma.
State gpu_random_annotate(const State& sketch, AnnotationContext& ctx, const GpuLimits& limits = {});

// Whether the program fits the limits as the GPU runs it (threads per
// block, virtual threads, shared memory and register tiles after
// ir/virtual_threads.h); false when it does not lower. The evolutionary
// search drops mutants that do not fit, as annotation redraws them.
bool fits_gpu_limits(const State& s, const GpuLimits& limits = {});

}  // namespace loom
