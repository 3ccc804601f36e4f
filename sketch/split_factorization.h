// Tile-size candidates for a split: every way to choose n lengths whose
// product divides the extent, with the innermost length bounded (Ansor's
// SplitFactorizationMemo). Cached per (extent, n, bound): the same extents
// come up for every sampled state.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace loom {

class SplitFactorizationMemo {
 public:
  using Scheme = std::vector<int64_t>;  // lengths, outer to inner (SplitStep order)

  // All schemes for (extent, n_lengths, max_innermost); never empty (all 1s
  // always qualifies). The reference stays valid for the memo's lifetime.
  const std::vector<Scheme>& schemes(int64_t extent, int n_lengths, int64_t max_innermost);
  // Divisors of n, ascending (cached).
  const std::vector<int64_t>& divisors(int64_t n);

 private:
  void enumerate(int64_t remaining, int n_lengths, int64_t max_innermost, Scheme& cur,
                 std::vector<Scheme>& out);
  std::map<std::tuple<int64_t, int, int64_t>, std::vector<Scheme>> schemes_;
  std::map<int64_t, std::vector<int64_t>> divisors_;
};

}  // namespace loom
