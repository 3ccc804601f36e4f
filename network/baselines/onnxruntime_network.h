// A whole network in ONNX Runtime, the engine users run ONNX files with:
// npm's onnxruntime-node (CPU execution provider, graph optimizations on,
// the target's intra-op threads) in a node process that runs
// onnxruntime_runner.js and answers over pipes. scripts/setup.sh installs a
// pinned package into build/onnxruntime-node; $LOOM_ONNXRUNTIME names another
// package folder. Where node or the package is missing, `available` says why
// in one line and the caller skips the baseline.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "network/baselines/pytorch_network.h"  // TorchTensor: a shape and float data

namespace loom {

class OnnxRuntimeNetwork {
 public:
  // "" when node and the package are there, else why not (one line).
  static std::string unavailable_reason();

  // Starts the runner on `model` (an ONNX file). Throws LoomError naming the
  // model when ONNX Runtime cannot load it.
  OnnxRuntimeNetwork(const std::string& model, int threads);
  ~OnnxRuntimeNetwork();
  OnnxRuntimeNetwork(const OnnxRuntimeNetwork&) = delete;
  OnnxRuntimeNetwork& operator=(const OnnxRuntimeNetwork&) = delete;

  std::string version() const;
  // The model's input names, in its order.
  const std::vector<std::string>& input_names() const;
  // Sets the inputs of every following run (float data; ONNX Runtime gets
  // them in each input's own element type).
  void feed(const std::vector<std::string>& names, const std::vector<TorchTensor>& inputs);
  // `times` runs back to back; each one's wall time inside the runner, in
  // seconds.
  std::vector<double> run(int times = 1);
  // Returns once the runner's threads have gone quiet (ONNX Runtime's
  // intra-op pool spins after a run), at most a second.
  void wait_until_idle();
  // The last run's outputs, in the model's order, as float.
  std::vector<TorchTensor> outputs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
