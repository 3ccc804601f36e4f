#include "sketch/split_factorization.h"

namespace loom {

const std::vector<int64_t>& SplitFactorizationMemo::divisors(int64_t n) {
  auto it = divisors_.find(n);
  if (it != divisors_.end()) return it->second;
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return divisors_[n] = small;
}

void SplitFactorizationMemo::enumerate(int64_t remaining, int n_lengths, int64_t max_innermost,
                                       Scheme& cur, std::vector<Scheme>& out) {
  if (static_cast<int>(cur.size()) == n_lengths) {
    out.push_back(cur);
    return;
  }
  const bool innermost = static_cast<int>(cur.size()) == n_lengths - 1;
  // Copy: divisors() may rehash the map while we recurse.
  const std::vector<int64_t> ds = divisors(remaining);
  for (int64_t d : ds) {
    if (innermost && d > max_innermost) break;
    cur.push_back(d);
    enumerate(remaining / d, n_lengths, max_innermost, cur, out);
    cur.pop_back();
  }
}

const std::vector<SplitFactorizationMemo::Scheme>& SplitFactorizationMemo::schemes(
    int64_t extent, int n_lengths, int64_t max_innermost) {
  auto key = std::make_tuple(extent, n_lengths, max_innermost);
  auto it = schemes_.find(key);
  if (it != schemes_.end()) return it->second;
  std::vector<Scheme> out;
  Scheme cur;
  enumerate(extent, n_lengths, max_innermost, cur, out);
  return schemes_[key] = std::move(out);
}

}  // namespace loom
