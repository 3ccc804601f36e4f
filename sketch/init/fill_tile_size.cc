// Tile sizes: every SP step of the sketch gets random lengths, mostly from
// the factorizations of its extent (so tiles divide the loop), sometimes
// (settings.non_divisible_split_probability) any lengths that fit.
#include "ir/steps.h"
#include "sketch/annotation.h"

namespace loom {

namespace {

std::vector<int64_t> any_fitting_lengths(int64_t extent, size_t n, int64_t max_innermost,
                                         std::mt19937_64& rng) {
  // Inner to outer, each length at most what is left of the extent, so the
  // product never exceeds it.
  std::vector<int64_t> lengths(n, 1);
  int64_t left = extent;
  for (size_t k = n; k-- > 0;) {
    int64_t upper = k + 1 == n ? std::min(left, max_innermost) : left;
    lengths[k] = 1 + static_cast<int64_t>(random_below(rng, static_cast<uint64_t>(std::max<int64_t>(upper, 1))));
    left /= lengths[k];
  }
  return lengths;
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
    if (u < cfg.non_divisible_split_probability) {
      filled->lengths = any_fitting_lengths(sp->extent, n, cfg.max_innermost_split_factor, ctx.rng);
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
