// Vendor-library baselines, measured with the same timing protocol and the
// same correctness check as Loom's own candidates. Library headers (oneDNN,
// OpenBLAS, cuDNN, cuBLAS) stay inside their one .cc file each.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "measure/task.h"
#include "measure/timing.h"

namespace loom {

struct BaselineResult {
  std::string library;   // "onednn", "openblas"
  std::string variant;   // e.g. "row-major", "prepacked weights", "own layouts"
  bool supported = false;
  std::string reason;    // why not supported
  std::vector<double> costs_s;
  double median_s = 0;
  std::string check;     // "" when the output matched the reference
  double gflops(double flops) const { return median_s > 0 ? flops / median_s / 1e9 : 0; }
};

using TensorMap = std::map<std::string, std::vector<float>>;

// Runs every oneDNN variant that can express the task's workload, on the
// given inputs, checking each against `reference` (the DAG's outputs). A
// workload oneDNN cannot express gives one unsupported result saying so.
std::vector<BaselineResult> run_onednn_baselines(const Task& task, const TimingOptions& timing,
                                                 const TensorMap& inputs, const TensorMap& reference);

}  // namespace loom
