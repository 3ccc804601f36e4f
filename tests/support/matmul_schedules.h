// Random complete schedules of the matmul workload (multi-level "SSRSRS"
// tiling with random divisor tile sizes, fused+parallel outer loops, a
// vectorized innermost loop, a random auto-unroll pragma): a population of
// known structure, independent of the sketch sampler, for the cost model's
// tests and benchmark.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "ir/state.h"
#include "ir/workload_registry.h"

namespace loom {

struct MatmulTiles {
  int64_t i[3], j[3], k;  // inner split lengths (outer -> inner) of i, j and k
  int64_t unroll;
};

inline int64_t random_divisor(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> d;
  for (int64_t x = 1; x <= n; ++x)
    if (n % x == 0) d.push_back(x);
  return d[rng() % d.size()];
}

inline MatmulTiles random_matmul_tiles(int64_t M, int64_t N, int64_t K, std::mt19937_64& rng) {
  MatmulTiles t{};
  int64_t m = M, n = N;
  for (int l = 2; l >= 0; --l) {  // innermost first, each dividing what is left
    t.i[l] = random_divisor(std::min<int64_t>(m, 64), rng), m /= t.i[l];
    t.j[l] = random_divisor(std::min<int64_t>(n, 64), rng), n /= t.j[l];
  }
  t.k = random_divisor(std::min<int64_t>(K, 64), rng);
  const int64_t unrolls[4] = {0, 16, 64, 512};
  t.unroll = unrolls[rng() % 4];
  return t;
}

// Stage 2 is C (A and B are placeholders).
inline State matmul_state(const std::shared_ptr<const ComputeDAG>& dag, const MatmulTiles& t) {
  State s = State::initial(dag);
  const int C = 2;
  s = s.split(C, 0, {t.i[0], t.i[1], t.i[2]});  // i0..i3 at 0..3, j at 4, rk at 5
  s = s.split(C, 4, {t.j[0], t.j[1], t.j[2]});  // j0..j3 at 4..7, rk at 8
  s = s.split(C, 8, {t.k});                     // k0, k1 at 8, 9
  s = s.reorder(C, {0, 4, 1, 5, 8, 2, 6, 9, 3, 7});
  s = s.fuse(C, {0, 1});
  s = s.annotate(C, 0, IterAnnotation::kParallel);
  int last = static_cast<int>(s.stage(C).leaves.size()) - 1;
  if (t.j[2] > 1) s = s.annotate(C, last, IterAnnotation::kVectorize);
  if (t.unroll > 0) s = s.pragma(C, 0, "auto_unroll_max_step$" + std::to_string(t.unroll));
  return s;
}

inline std::vector<State> random_matmul_states(const std::shared_ptr<const ComputeDAG>& dag, int64_t M,
                                               int64_t N, int64_t K, size_t count, uint64_t seed,
                                               std::vector<MatmulTiles>* tiles = nullptr) {
  std::mt19937_64 rng(seed);
  std::vector<State> out;
  for (size_t i = 0; i < count; ++i) {
    MatmulTiles t = random_matmul_tiles(M, N, K, rng);
    out.push_back(matmul_state(dag, t));
    if (tiles) tiles->push_back(t);
  }
  return out;
}

}  // namespace loom
