// The worker side of measurement (the `loom_worker` executable): holds the
// current task (DAG, reference inputs/outputs in aligned buffers) and the
// last checked kernel, and answers the requests of measure/protocol.h.
#pragma once

#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/llvm/llvm_jit.h"
#include "measure/reference_data.h"
#include "measure/worker/gpu_session.h"
#include "measure/task.h"

namespace loom {

// 64-byte aligned float buffer between two 64-byte guard zones, so that a
// kernel writing just outside a tensor is caught (guard_damage) instead of
// corrupting the worker's heap unseen.
class AlignedBuffer {
 public:
  static constexpr size_t kGuardFloats = 16;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n);
  float* data() { return ptr_ ? ptr_.get() + kGuardFloats : nullptr; }
  const float* data() const { return ptr_ ? ptr_.get() + kGuardFloats : nullptr; }
  size_t size() const { return n_; }
  // "" or where the guards were overwritten ("before its start", "past its end").
  std::string guard_damage() const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> ptr_;
  size_t n_ = 0;
  size_t padded_ = 0;  // floats from data() to the second guard
};

class WorkerSession {
 public:
  using Reply = std::function<void(const nlohmann::json&)>;
  // Handles one request; false when the worker should exit afterwards.
  bool handle(const nlohmann::json& req, const Reply& reply);

 private:
  Task task_;
  ReferenceData ref_;
  std::map<std::string, AlignedBuffer> inputs_;   // working copies (pristine: ref_.inputs)
  std::map<std::string, AlignedBuffer> outputs_;
  bool inputs_dirty_ = false;
  std::unique_ptr<CompiledKernel> kernel_;
  std::vector<float*> args_;
  std::deque<AlignedBuffer> pretransformed_;  // blocked copies of constant inputs (stable addresses)
  int kernel_id_ = -1;
  double simulated_cost_s_ = 0;  // fault "simulated_time": the cost reported instead of a timing
  bool slow_device_ = false;     // fault "slow_device": simulated_time whose timing takes kSlowDeviceTimingS
  GpuSession gpu_;  // target "cuda ...": the GPU path

  void load_task(const nlohmann::json& req);
  bool build_and_check(const nlohmann::json& req, const Reply& reply);
  bool time(const nlohmann::json& req, const Reply& reply);
};

// Test-only faults (MeasureOptions::test_faults) applied where a candidate's
// code would do the same: "build_spin"/"build_segfault" while building,
// the others in place of the checking run.
void inject_build_fault(const std::string& fault);
void inject_run_fault(const std::string& fault);
// In the warm second checking run (a short kernel's): "disturbed_check".
void inject_recheck_fault(const std::string& fault);
// Fault "slow_device": how long a timing takes (a device whose timed runs
// dominate, as a measurement farm's do: the distributed benchmark).
inline constexpr double kSlowDeviceTimingS = 1.0;

// Fault "simulated_time": a program's cost, 1-2 ms, a function of its steps.
double simulated_cost_s(const nlohmann::json& steps);

}  // namespace loom
