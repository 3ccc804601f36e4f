// Innermost-length mutation: the innermost length of one split (the
// register tile's rows, the vector loop's width, the inner reduction) moves
// to a nearby value that need not divide the extent: by 1 or 2, or by a
// whole vector when it is a multiple of the vector width (a vector loop
// stays one of whole vectors). The last tile of the split is then partial
// and guarded (tested once per tile, ir/full_tile.h); half the time the
// split's other lengths become 1, so that it is the only partial one.
#include <algorithm>

#include "ir/steps.h"
#include "search/mutation_rule.h"
#include "sketch/gpu/gpu_rules.h"

namespace loom {
namespace {

class InnermostLengthMutation : public MutationRule {
 public:
  const char* name() const override { return "innermost_length"; }

  std::optional<State> apply(const State& s, MutationContext& ctx) const override {
    std::vector<size_t> splits;
    for (size_t idx : steps_of_type<SplitStep>(s))
      if (!is_cross_thread_split(s.steps(), idx)) splits.push_back(idx);  // a thread count, not a tile
    if (splits.empty()) return std::nullopt;
    const int64_t vw = ctx.task.vector_width;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const size_t idx = splits[ctx.rng() % splits.size()];
      const auto& sp = static_cast<const SplitStep&>(*s.steps()[idx]);
      if (sp.lengths.empty()) continue;
      const int64_t inner = sp.lengths.back();
      static const int64_t kSteps[] = {-2, -1, 1, 2};
      const int64_t step = inner >= vw && inner % vw == 0 ? vw : 1;
      const int64_t next = inner + step * kSteps[ctx.rng() % 4];
      if (next < 1 || next > ctx.task.settings.max_innermost_split_factor) continue;
      std::vector<int64_t> lengths = sp.lengths;
      lengths.back() = next;
      // A tile that does not divide the extent leaves a partial tile in
      // every block of the outer lengths too: 128 rows in blocks of
      // 2 x 4 x 6 = 48 compute 144, a third of them in the guarded version.
      // Half the time the other lengths become 1, leaving one
      // partial tile of the new length.
      int64_t tile = 1;
      for (int64_t l : lengths) tile *= l;
      if (sp.extent % tile != 0 && ctx.rng() % 2 == 0) std::fill(lengths.begin(), lengths.end() - 1, 1);
      if (auto r = replay_with_split_lengths(s, idx, std::move(lengths))) return r;
    }
    return std::nullopt;
  }
};

}  // namespace

std::shared_ptr<const MutationRule> make_innermost_length_mutation() {
  return std::make_shared<InnermostLengthMutation>();
}

}  // namespace loom
