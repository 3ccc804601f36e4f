// Random annotation of GPU sketches (see gpu_rules.h).
#include <algorithm>
#include <functional>
#include <set>

#include "ir/error.h"
#include "ir/lower.h"
#include "ir/steps.h"
#include "sketch/analysis.h"
#include "sketch/gpu/gpu_rules.h"

namespace loom {

namespace {

using namespace sketch_analysis;

bool is_bound(IterAnnotation a) {
  return a == IterAnnotation::kBlockX || a == IterAnnotation::kBlockY || a == IterAnnotation::kBlockZ ||
         a == IterAnnotation::kThreadX || a == IterAnnotation::kThreadY || a == IterAnnotation::kThreadZ;
}

// Resource use of a lowered GPU program, measured on its loop nest.
struct Usage {
  int64_t max_threads = 1, max_vthread = 1, shared_bytes = 0, max_local = 0;
};

// Shared and local memory as the GPU runs the program (ir/virtual_threads.h):
// lowering sizes shared tiles for all virtual threads already; a local tile
// inside vthread loops has a copy per virtual thread (counted here without
// running the pass: it is the costly part of a draw).
Usage usage_of(const LoweredFunc& f) {
  Usage u;
  for (const auto& t : f.temps)
    if (t.scope == BufferScope::kShared) u.shared_bytes += 4 * t.size();
  std::function<void(const Stmt&, int64_t)> walk = [&](const Stmt& s, int64_t vthreads) {
    if (!s) return;
    if (s->kind == StmtKind::kFor) {
      if (s->for_kind == ForKind::kThreadX) u.max_threads = std::max(u.max_threads, s->extent);
      if (s->for_kind == ForKind::kVThread) {
        vthreads *= s->extent;
        u.max_vthread = std::max(u.max_vthread, vthreads);
      }
    }
    if (s->kind == StmtKind::kAllocate)
      if (const Buffer* b = f.find_buffer(s->buffer); b && b->scope == BufferScope::kLocal)
        u.max_local = std::max(u.max_local, vthreads * b->size());
    for (const Stmt& b : s->body) walk(b, vthreads);
  };
  walk(f.body, 1);
  return u;
}

// A cross-thread reduction's thread count: a power of two from {32, ...,
// 1024} within the block limit and not above the reduce extent (idle
// threads only add barrier work); 32 when the extent is smaller.
int64_t cross_thread_count(int64_t reduce_extent, AnnotationContext& ctx, const GpuLimits& limits) {
  std::vector<int64_t> options;
  for (int64_t t = 32; t <= 1024; t *= 2)
    if (t <= limits.max_threads_per_block && (t <= reduce_extent || options.empty())) options.push_back(t);
  return options[random_below(ctx.rng, options.size())];
}

// One random filling of every SP step: the thread count of a cross-thread
// reduction, a vector length in {1, 2, 4} for the cooperative-fetch vector
// split (an SP followed by an FFSP on the same stage), divisor-based
// schemes for the rest.
State fill_once(const State& sketch, AnnotationContext& ctx, const GpuLimits& limits) {
  std::vector<StepPtr> steps = sketch.steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    auto* sp = dynamic_cast<const SplitStep*>(steps[i].get());
    if (!sp) continue;
    auto filled = std::make_shared<SplitStep>(*sp);
    auto* next = i + 1 < steps.size() ? dynamic_cast<const FollowFusedSplitStep*>(steps[i + 1].get()) : nullptr;
    if (is_cross_thread_split(steps, i)) {
      filled->lengths = {std::min(sp->extent, cross_thread_count(sp->extent, ctx, limits))};
    } else if (next && next->stage == sp->stage && sp->lengths.size() == 1) {
      static const int64_t kVec[] = {1, 2, 4};
      int64_t v = kVec[random_below(ctx.rng, 3)];
      while (v > 1 && sp->extent % v != 0) v /= 2;
      filled->lengths = {v};
    } else {
      const auto& schemes = ctx.memo.schemes(sp->extent, static_cast<int>(sp->lengths.size()),
                                             ctx.task.settings.max_innermost_split_factor);
      filled->lengths = schemes[random_below(ctx.rng, schemes.size())];
    }
    steps[i] = filled;
  }
  return State::replay(sketch.dag_ptr(), steps);
}

bool can_inline(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (!st.op->reduce_axes.empty() || is_output(s, stage) || effective_consumers(s, stage).empty()) return false;
  for (const auto& other : s.stages())
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage) return false;
  return true;
}

// Free stages (root, global scope, untiled, not outputs): inlined if they can be.
State place_free_stages(State s) {
  for (int i = static_cast<int>(s.stages().size()) - 1; i >= 0; --i) {
    const Stage& st = s.stage(i);
    if (!has_loops(st) || is_output(s, i) || st.compute_at != ComputeAtKind::kRoot) continue;
    if (st.scope != BufferScope::kGlobal || is_tiled(st)) continue;
    if (can_inline(s, i)) s = s.compute_inline(i);
  }
  return s;
}

// Root stages with no bound loop: outer spatial loops fused, split by a
// random thread count, bound to blockIdx.x / threadIdx.x.
State bind_root_stages(State s, AnnotationContext& ctx, const GpuLimits& limits) {
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!has_loops(st) || st.compute_at != ComputeAtKind::kRoot) continue;
    bool bound = false;
    for (int id : st.leaves) bound |= is_bound(st.iters[id].annotation);
    if (bound) continue;
    int n = 0;
    int64_t extent = 1;
    while (n < static_cast<int>(st.leaves.size())) {
      const Iterator& it = st.iters[st.leaves[n]];
      if (it.kind != IterKind::kSpatial || it.annotation != IterAnnotation::kNone) break;
      extent *= it.extent;
      ++n;
    }
    if (n == 0 || extent <= 1) continue;  // a scalar: one thread (cross_thread_reduction.cc is the alternative)
    const int stage = static_cast<int>(i);
    if (n > 1) {
      std::vector<int> span;
      for (int p = 0; p < n; ++p) span.push_back(p);
      s = s.fuse(stage, span);
    }
    static const int64_t kThreads[] = {32, 64, 128, 256, 512, 1024};
    std::vector<int64_t> options;
    for (int64_t t : kThreads)
      if (t <= limits.max_threads_per_block && (t <= extent || options.empty())) options.push_back(t);
    int64_t t = std::min(extent, options[random_below(ctx.rng, options.size())]);
    if (t >= extent) {
      s = s.annotate(stage, 0, IterAnnotation::kThreadX);
      continue;
    }
    s = s.split(stage, 0, {t});
    s = s.annotate(stage, 0, IterAnnotation::kBlockX);
    s = s.annotate(stage, 1, IterAnnotation::kThreadX);
  }
  return s;
}

State annotate_gpu_unroll(State s, AnnotationContext& ctx) {
  // Ansor's GPU options are {0, 16, 64, 512, 1024}; 1024 makes NVRTC take
  // seconds on long reduction loops for little gain.
  static const int kOptions[] = {0, 16, 64, 512};
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (!has_loops(st) || !has_reduce_iter(st) || st.leaves.empty()) continue;
    const int n = kOptions[random_below(ctx.rng, 4)];
    s = s.pragma(static_cast<int>(i), 0, "auto_unroll_max_step$" + std::to_string(n));
  }
  return s;
}

bool fits(const Usage& u, const GpuLimits& limits) {
  return u.max_threads <= limits.max_threads_per_block && u.max_vthread <= limits.max_vthread &&
         u.shared_bytes <= limits.max_shared_bytes_per_block && u.max_local <= limits.max_local_floats;
}

}  // namespace

bool fits_gpu_limits(const State& s, const GpuLimits& limits) {
  try {
    return fits(usage_of(lower(s)), limits);
  } catch (const LoomError&) {
    return false;
  }
}

State gpu_random_annotate(const State& sketch, AnnotationContext& ctx, const GpuLimits& limits) {
  constexpr int kAttempts = 48;
  std::string last_error = "no draw fits the limits";
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    State s;
    Usage u;
    try {
      // Tile sizes may not fit (a follow split longer than the fetched
      // extent) or not lower: draw again.
      s = fill_once(sketch, ctx, limits);
      s = place_free_stages(s);
      s = bind_root_stages(s, ctx, limits);
      u = usage_of(lower(s));
    } catch (const LoomError& e) {
      last_error = e.what();
      continue;
    }
    if (fits(u, limits)) return annotate_gpu_unroll(s, ctx);
    last_error = "threads " + std::to_string(u.max_threads) + ", vthreads " + std::to_string(u.max_vthread) +
                 ", shared bytes " + std::to_string(u.shared_bytes) + ", local floats " +
                 std::to_string(u.max_local) + " exceed the limits";
  }
  throw LoomError("GPU annotation found no tile sizes within the limits in " + std::to_string(kAttempts) +
                  " draws (last: " + last_error + ")");
}

}  // namespace loom
