// Internal to measure/: the event loop that drives one batch of candidates
// through the worker pool (build in parallel, check, time one at a time),
// with deadlines, crash detection and worker replacement. Measurer (the
// public API, measure/measurer.h) owns the pool and the reference files.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measurer.h"
#include "measure/worker_process.h"

namespace loom {

// One long-lived worker and what it is doing.
struct WorkerSlot {
  enum class Phase { kIdle, kLoading, kBuilding, kChecking, kReady, kTiming };
  WorkerProcess proc;
  Phase phase = Phase::kIdle;
  int cand = -1;             // candidate index in the batch
  double deadline = 0;       // steady-clock seconds
  double once_s = 0;         // the checking run's time
  std::string loaded_task;   // task key loaded into the worker
  bool started_once = false;
  int64_t memory_limit_mb = 0;  // the address-space limit the worker was started with
};

struct BatchInput {
  const Task* task = nullptr;
  std::string task_key;
  std::string reference_path;
  const std::vector<nlohmann::json>* steps = nullptr;
  std::map<int, std::string> faults;
  double best_known_s = 0;  // best cost measured for the task so far (0: none)
};

// Measures every candidate of `in`; fills `stats` (build/check/run sums,
// errors, restarts; not wall_s/reference_s).
std::vector<MeasureResult> run_batch(const BatchInput& in, const MeasureOptions& opts,
                                     const std::string& worker_exe,
                                     std::vector<std::unique_ptr<WorkerSlot>>& slots,
                                     MeasureBatchStats& stats);

double steady_seconds();

}  // namespace loom
