// Tile-size mutation: move a factor of one split level to another level of
// the same split (the implicit outermost level included), keeping the
// product of the lengths within the extent and the innermost length within
// max_innermost_split_factor. Follow-splits replay with the new lengths.
// A cross-thread reduction's thread-count split (sketch/gpu) is not a tile:
// its inner length may reach the 1024 threads of a block instead.
#include "ir/steps.h"
#include "search/mutation_rule.h"
#include "sketch/gpu/gpu_rules.h"

namespace loom {
namespace {

std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 2; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

class TileSizeMutation : public MutationRule {
 public:
  const char* name() const override { return "tile_size"; }

  std::optional<State> apply(const State& s, MutationContext& ctx) const override {
    std::vector<size_t> splits = steps_of_type<SplitStep>(s);
    if (splits.empty()) return std::nullopt;
    for (int attempt = 0; attempt < 8; ++attempt) {
      size_t idx = splits[ctx.rng() % splits.size()];
      const auto& sp = static_cast<const SplitStep&>(*s.steps()[idx]);
      // levels[0] is the implicit outer level (only when it divides evenly).
      int64_t prod = 1;
      for (int64_t l : sp.lengths) prod *= l;
      std::vector<int64_t> levels;
      levels.push_back(sp.extent % prod == 0 ? sp.extent / prod : 1);
      levels.insert(levels.end(), sp.lengths.begin(), sp.lengths.end());
      std::vector<size_t> sources;
      for (size_t l = 0; l < levels.size(); ++l)
        if (levels[l] > 1) sources.push_back(l);
      if (sources.empty() || levels.size() < 2) continue;
      size_t src = sources[ctx.rng() % sources.size()];
      auto divs = divisors_above_one(levels[src]);
      int64_t f = divs[ctx.rng() % divs.size()];
      size_t dst = ctx.rng() % (levels.size() - 1);
      if (dst >= src) ++dst;
      levels[src] /= f;
      levels[dst] *= f;
      std::vector<int64_t> lengths(levels.begin() + 1, levels.end());
      const int64_t max_inner = is_cross_thread_split(s.steps(), idx) ? GpuLimits().max_threads_per_block
                                                                       : ctx.task.settings.max_innermost_split_factor;
      if (lengths.back() > max_inner) continue;
      if (auto r = replay_with_split_lengths(s, idx, std::move(lengths))) return r;
    }
    return std::nullopt;
  }
};

}  // namespace

std::shared_ptr<const MutationRule> make_tile_size_mutation() {
  return std::make_shared<TileSizeMutation>();
}

}  // namespace loom
