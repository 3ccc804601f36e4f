// Vendor-library baselines, measured with the same timing protocol and the
// same correctness check as Loom's own candidates. Library headers (oneDNN,
// OpenBLAS, cuDNN, cuBLAS) stay inside their own .cc files (onednn_*.cc,
// openblas.cc).
//
// Each library returns one result per variant it measured, e.g. for oneDNN
// conv2d: "NCHW direct" (primitive on the workload's own layouts),
// "NCHW in/out, reorders timed" (oneDNN's preferred layouts inside, the
// activation reorders inside the timed call) and "preferred layouts,
// reorders outside". Weights may be prepacked outside the timed region in all
// of them, as a deployed model does once. A workload (or a variant) the
// library cannot express gives a result with supported = false and a reason;
// nothing is silently skipped.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "measure/task.h"
#include "measure/timing.h"

namespace loom {

struct BaselineResult {
  std::string library;   // "onednn", "openblas"
  std::string variant;   // e.g. "row-major, B prepacked", "preferred layouts, reorders outside"
  bool supported = false;
  std::string reason;    // why not supported
  std::vector<double> costs_s;
  double median_s = 0;
  std::string check;     // "" when the output matched the reference
  std::string impl;      // the library's implementation name, when it tells ("brg:avx512_core")
  // True when the library read every input as the task gives it: nothing
  // prepacked or reordered outside the timed call (Loom's own contract — its
  // programs pack inside the time they are measured). oneDNN's matmul with
  // plain B is; with B prepacked it is not.
  bool inputs_as_given = false;
  double gflops(double flops) const { return median_s > 0 ? flops / median_s / 1e9 : 0; }
};

using TensorMap = std::map<std::string, std::vector<float>>;

// Runs every oneDNN variant that can express the task's workload, on the
// given inputs, checking each against `reference` (the DAG's outputs). A
// workload oneDNN cannot express gives one unsupported result saying so.
// Threads: task.target.threads (omp_set_num_threads).
std::vector<BaselineResult> run_onednn_baselines(const Task& task, const TimingOptions& timing,
                                                 const TensorMap& inputs, const TensorMap& reference);

// The same for OpenBLAS (cblas_sgemm for the matrix-product workloads,
// snrm2 for norm). Threads: openblas_set_num_threads(task.target.threads).
std::vector<BaselineResult> run_openblas_baselines(const Task& task, const TimingOptions& timing,
                                                   const TensorMap& inputs, const TensorMap& reference);

// GPU baselines (target "cuda ..."): cuBLAS SGEMM for matmul/batch_matmul,
// cuDNN for the 2-D convolutions and conv2d+bias+ReLU. Without the CUDA
// toolkit at build time, or without a device, they return one unsupported
// result saying so ("no GPU device: ...").
std::vector<BaselineResult> run_cublas_baselines(const Task& task, const TimingOptions& timing,
                                                 const TensorMap& inputs, const TensorMap& reference);
std::vector<BaselineResult> run_cudnn_baselines(const Task& task, const TimingOptions& timing,
                                                const TensorMap& inputs, const TensorMap& reference);

// ---- the list of libraries (baselines/registry.cc) --------------------------

using BaselineRunner = std::vector<BaselineResult> (*)(const Task& task, const TimingOptions& timing,
                                                       const TensorMap& inputs, const TensorMap& reference);

// A library as a per-operator baseline. A new library is one file defining
// its runner and one row of the list.
struct OperatorBaseline {
  const char* name;  // as configs name it: "onednn"
  bool gpu;          // it runs tasks of GPU targets (else of CPU targets)
  BaselineRunner run;
  // Runs it when `target` is its kind, else gives one unsupported result.
  std::vector<BaselineResult> run_for(const Task& task, const TimingOptions& timing, const TensorMap& inputs,
                                      const TensorMap& reference) const;
};

// Every library, in the order `loom baseline` runs them.
const std::vector<OperatorBaseline>& operator_baselines();
// nullptr if unknown.
const OperatorBaseline* find_operator_baseline(const std::string& name);
// "onednn, openblas, cublas or cudnn" (for messages).
std::string operator_baseline_names();

// ---- shared by the library files -------------------------------------------

// Runs `run` once, checks output() against `want`, then times `run` with the
// timing protocol. `r` carries library, variant and impl.
BaselineResult measure_baseline(BaselineResult r, const std::function<void()>& run,
                                const std::function<std::vector<float>()>& output,
                                const std::vector<float>& want, const TimingOptions& timing);

BaselineResult unsupported_baseline(const std::string& library, const std::string& variant,
                                    const std::string& reason);

}  // namespace loom
