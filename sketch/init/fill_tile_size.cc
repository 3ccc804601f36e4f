// Tile sizes: every SP step of the sketch gets random lengths, mostly from
// the factorizations of its extent (so tiles divide the loop), sometimes
// (settings.non_divisible_split_probability; for extents that are not a
// multiple of the vector width settings.poorly_divisible_split_probability)
// from those of the
// extent rounded up to a multiple of 4 ... 64: the last tile is then
// partial and guarded, the others are whole.
#include "ir/steps.h"
#include "sketch/annotation.h"

namespace loom {

namespace {

// True for an extent of at least two vectors that whole vectors do not tile:
// its divisible tilings are partial vectors (1000: 8, 40 or 50 lanes) or,
// for a prime (577), 1 or the whole extent.
bool poorly_divisible(int64_t extent, int64_t vector_width) {
  if (extent < 2 * vector_width) return false;
  return extent % vector_width != 0;
}

// Lengths from the factorizations of the extent rounded up to a multiple of
// 4, 8, 16, 32 or 64 whose product still fits the extent; empty when there
// is none.
std::vector<int64_t> rounded_up_lengths(int64_t extent, size_t n, int64_t max_innermost,
                                        SplitFactorizationMemo& memo, std::mt19937_64& rng) {
  static const int64_t kMultiples[] = {4, 8, 16, 32, 64};
  const int64_t m = kMultiples[random_below(rng, 5)];
  const int64_t rounded = (extent + m - 1) / m * m;
  std::vector<const SplitFactorizationMemo::Scheme*> fitting;
  for (const auto& scheme : memo.schemes(rounded, static_cast<int>(n), max_innermost)) {
    int64_t prod = 1;
    for (int64_t l : scheme) prod *= l;
    if (prod <= extent && extent % prod != 0) fitting.push_back(&scheme);
  }
  if (fitting.empty()) return {};
  return *fitting[random_below(rng, fitting.size())];
}

}  // namespace

State fill_tile_sizes(const State& sketch, AnnotationContext& ctx) {
  const SketchSettings& cfg = ctx.task.settings;
  std::vector<StepPtr> steps = sketch.steps();
  for (auto& step : steps) {
    auto* sp = dynamic_cast<const SplitStep*>(step.get());
    if (!sp) continue;
    auto filled = std::make_shared<SplitStep>(*sp);
    const size_t n = sp->lengths.size();
    const double u = static_cast<double>(ctx.rng() >> 11) / static_cast<double>(1ull << 53);
    const double p = poorly_divisible(sp->extent, ctx.task.vector_width) ? cfg.poorly_divisible_split_probability
                                                  : cfg.non_divisible_split_probability;
    std::vector<int64_t> lengths;
    if (u < p) lengths = rounded_up_lengths(sp->extent, n, cfg.max_innermost_split_factor, ctx.memo, ctx.rng);
    if (!lengths.empty()) {
      filled->lengths = lengths;
    } else {
      const auto& schemes =
          ctx.memo.schemes(sp->extent, static_cast<int>(n), cfg.max_innermost_split_factor);
      filled->lengths = schemes[random_below(ctx.rng, schemes.size())];
    }
    step = filled;
  }
  return State::replay(sketch.dag_ptr(), steps);
}

}  // namespace loom
