// The GPU half of a measurement worker (target "cuda -arch=sm_NN"): lower,
// emit CUDA C, NVRTC -> PTX, load with the driver API, run once on the
// reference inputs (outputs pre-filled with NaN), compare, then time with
// CUDA events (warm-up, `repeat` groups of at least `min_repeat_ms`).
// A CUDA error that poisons the context (illegal address, launch failure)
// is reported with "exit": true — the tuner replaces the worker.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/reference_data.h"
#include "measure/task.h"

namespace loom {

class GpuSession {
 public:
  using Reply = std::function<void(const nlohmann::json&)>;
  GpuSession();
  ~GpuSession();
  // Same requests and replies as WorkerSession (measure/protocol.h).
  // Return false when the worker must exit.
  bool build_and_check(const Task& task, const ReferenceData& ref, const nlohmann::json& req,
                       const Reply& reply);
  bool time(const nlohmann::json& req, const Reply& reply);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
