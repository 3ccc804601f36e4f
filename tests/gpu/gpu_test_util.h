// Helpers shared by the GPU tests: random GPU states of a workload, and
// the long-mode switch (LOOM_LONG_TESTS=1).
#pragma once

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/workload_registry.h"
#include "sketch/sketch_policy.h"

namespace loom::testing {

inline bool long_tests() {
  const char* v = std::getenv("LOOM_LONG_TESTS");
  return v && std::string(v) == "1";
}

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

}  // namespace loom::testing
