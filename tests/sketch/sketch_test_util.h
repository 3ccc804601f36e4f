// Helpers shared by the sketch tests.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/workload_registry.h"
#include "sketch/sketch_task.h"

namespace loom::testing {

inline SketchTask sketch_task(const std::string& workload, const nlohmann::json& params, int threads = 1) {
  SketchTask t;
  t.dag = std::make_shared<const ComputeDAG>(make_workload(workload, params));
  t.threads = threads;
  return t;
}

}  // namespace loom::testing
