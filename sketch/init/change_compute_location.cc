// Compute locations of the stages the sketch rules left free (e.g. conv
// padding, a transpose, an rfactor partial sum without reuse): each is, at
// random, inlined (when it can be), kept at root, or computed at one loop of
// its consumer (or of the stage its consumer is computed at). Stages are
// visited from the output backwards so that a producer sees its consumer's
// final location. A packing copy (pack_reused_input) is computed at one of
// those loops, or, when it changes the layout (a conv's kernel stored
// channels-last), at root half the time: a one-time transposition of a
// small tensor instead of one per tile.
#include "sketch/analysis.h"
#include "sketch/annotation.h"

namespace loom {

namespace {

using namespace sketch_analysis;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// (stage, leaf position) pairs where `stage` may be computed (Ansor's
// candidate rules: not below the first reduce loop of an untiled consumer,
// nor below its reduce tile, nor inside an unrolled loop, not at loops of
// extent 1, and not inside a loop where another stage is already attached).
// A reduction is not computed inside a loop that does not move what its
// consumer reads of it (a row sum inside a loop over the row's columns):
// that would repeat the whole reduction at every iteration.
std::vector<std::pair<int, int>> location_candidates(const State& s, int stage) {
  std::vector<std::pair<int, int>> out;
  const int target = single_consumer_for_location(s, stage);
  if (target < 0) return out;
  const Stage& t = s.stage(target);
  const bool target_attached = t.compute_at == ComputeAtKind::kIter;
  const bool target_tiled = is_tiled(t);
  const bool reduction = !s.stage(stage).op->reduce_axes.empty();
  bool visited_reduce = false;
  for (size_t pos = 0; pos < t.leaves.size(); ++pos) {
    const Iterator& it = t.iters[t.leaves[pos]];
    if (it.kind == IterKind::kReduce) {
      visited_reduce = true;
      if (!target_tiled) break;
    } else if (visited_reduce) {
      break;  // the inner spatial tile below the reduce tile
    }
    if (it.annotation == IterAnnotation::kUnroll) break;
    if (it.extent == 1) continue;
    if (reduction && loop_repeats_reads_of(s, target, static_cast<int>(pos), stage)) break;
    // The outermost tile level of an attached stage runs once.
    if (target_attached && it.kind == IterKind::kSpatial && ends_with(it.name, ".0")) continue;
    out.emplace_back(target, static_cast<int>(pos));
    if (!stages_attached_at(s, target, t.leaves[pos]).empty()) break;
  }
  if (target_attached) {
    const int outer = t.attach_stage;
    const Stage& o = s.stage(outer);
    for (size_t pos = 0; pos < o.leaves.size(); ++pos) {
      const Iterator& it = o.iters[o.leaves[pos]];
      if (it.kind == IterKind::kReduce || !stages_attached_at(s, outer, o.leaves[pos]).empty()) break;
      if (it.annotation == IterAnnotation::kUnroll) break;
      if (it.extent == 1) continue;
      if (reduction && loop_repeats_reads_of(s, outer, static_cast<int>(pos), stage, target)) break;
      out.emplace_back(outer, static_cast<int>(pos));
    }
  }
  return out;
}

bool can_inline(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (!st.op->reduce_axes.empty() || is_output(s, stage)) return false;
  if (effective_consumers(s, stage).empty()) return false;
  for (const auto& other : s.stages())
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage) return false;
  return true;
}

}  // namespace

State change_compute_locations(const State& state, AnnotationContext& ctx) {
  State s = state;
  for (int i = static_cast<int>(s.stages().size()) - 1; i >= 0; --i) {
    const Stage& st = s.stage(i);
    if (!has_loops(st) || is_output(s, i)) continue;
    if (is_tiled(st) || needs_multi_level_tiling(s, i)) continue;
    auto candidates = location_candidates(s, i);
    if (is_packing_copy(s, i) && !candidates.empty()) {
      // Inlined it is the unpacked sketch again, at root a copy of the whole
      // tensor: only the locations inside its reader are drawn. A
      // transposing copy stays at root half the time: a one-time layout
      // change of (typically) weights, where inside the reader it would be
      // redone for every tile that needs it.
      const bool transposes = !st.storage_order.empty();
      if (transposes && random_below(ctx.rng, 2) == 0) continue;  // stays at root
      const uint64_t choice = random_below(ctx.rng, candidates.size());
      const auto& [target, pos] = candidates[choice];
      s = s.compute_at(i, target, pos);
      continue;
    }
    const uint64_t choice = random_below(ctx.rng, candidates.size() + 2);
    if (choice == 0) {
      if (can_inline(s, i)) s = s.compute_inline(i);
    } else if (choice == 1) {
      if (st.compute_at != ComputeAtKind::kRoot) s = s.compute_root(i);
    } else {
      const auto& [target, pos] = candidates[choice - 2];
      s = s.compute_at(i, target, pos);
    }
  }
  return s;
}

}  // namespace loom
