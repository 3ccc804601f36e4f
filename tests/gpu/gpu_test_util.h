// Helpers shared by the GPU tests: random GPU states of a workload (all, or
// only those with a cross-thread reduction), and REQUIRE_NVRTC() for tests
// that compile CUDA. Suites named DISABLED_*Long run more programs (ctest label long).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/cuda/nvrtc.h"
#include "ir/steps.h"
#include "ir/tensor.h"
#include "ir/workload_registry.h"
#include "sketch/gpu/gpu_rules.h"
#include "sketch/sketch_policy.h"

// Skips the calling test when the build has no CUDA toolkit (NVRTC).
#define REQUIRE_NVRTC()                                                              \
  do {                                                                               \
    if (!nvrtc_available()) GTEST_SKIP() << "no CUDA toolkit in this build (NVRTC)"; \
  } while (0)

namespace loom::testing {

inline SketchTask gpu_task(const std::string& workload, const nlohmann::json& params) {
  SketchTask t;
  t.dag = std::make_shared<const ComputeDAG>(make_workload(workload, params));
  t.is_gpu = true;
  return t;
}

inline std::vector<State> gpu_states(const std::string& workload, const nlohmann::json& params, int n,
                                     uint64_t seed) {
  SketchPolicy p(gpu_task(workload, params));
  std::mt19937_64 rng(seed);
  return p.sample(n, rng);
}

// Some stage reduces over a loop bound to threadIdx.x.
inline bool has_cross_thread_reduction(const State& s) {
  for (const Stage& st : s.stages())
    for (int id : st.leaves)
      if (st.iters[id].kind == IterKind::kReduce && st.iters[id].annotation == IterAnnotation::kThreadX)
        return true;
  return false;
}

// X[M, N] -> mn[i] = min_k X[i, k] -> out[i] = mn[i] + 1 (no suite
// workload has a min reduction): a consumer with no axis beyond the
// reduction's, so thread 0 writes it in a cross-thread state.
inline SketchTask min_reduce_task(int64_t M, int64_t N) {
  Tensor X = placeholder({M, N}, "X");
  Var k = reduce_axis(N, "rk");
  Tensor mn = compute({M}, [&](Var i) { return min_reduce(X(i, k), {k}); }, "mn");
  Tensor out = compute({M}, [&](Var i) { return mn(i) + Expr(1.0f); }, "out");
  SketchTask t;
  t.dag = std::make_shared<const ComputeDAG>(ComputeDAG({X}, {out}));
  t.is_gpu = true;
  return t;
}

// Up to n distinct random GPU states of a task with a cross-thread reduction.
inline std::vector<State> cross_thread_states(const SketchTask& task, int n, uint64_t seed) {
  SketchPolicy p(task);
  std::mt19937_64 rng(seed);
  std::vector<State> out;
  for (const State& s : p.sample(4 * n, rng))
    if (has_cross_thread_reduction(s) && static_cast<int>(out.size()) < n) out.push_back(s);
  return out;
}

// Up to n distinct random GPU states with a cross-thread reduction.
inline std::vector<State> cross_thread_states(const std::string& workload, const nlohmann::json& params, int n,
                                              uint64_t seed) {
  return cross_thread_states(gpu_task(workload, params), n, seed);
}

// The state with every cross-thread reduction's thread count set to
// `threads` (any count, as a tile-size mutation may leave it), or to the
// reduction's extent where that is smaller.
inline State with_thread_count(const State& s, int64_t threads) {
  std::vector<StepPtr> steps = s.steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!is_cross_thread_split(steps, i)) continue;
    auto sp = std::make_shared<SplitStep>(static_cast<const SplitStep&>(*steps[i]));
    sp->lengths = {sp->extent > 0 ? std::min(threads, sp->extent) : threads};
    steps[i] = sp;
  }
  return State::replay(s.dag_ptr(), steps);
}

}  // namespace loom::testing
