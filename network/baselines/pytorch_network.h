// A whole network in PyTorch: a frozen TorchScript file loaded through
// LibTorch. The baseline of `loom network run` is the module prepared with
// optimize_for_inference (convolutions through oneDNN with prepacked
// weights); the correctness reference is the frozen module as saved, run by
// PyTorch's plain kernels, because optimize_for_inference of PyTorch 1.13
// computes some models wrongly (a strided depthwise conv followed by
// element-wise ops gives errors of the order of the outputs). Only
// pytorch_network.cc sees LibTorch's headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom {

struct TorchTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  bool integer = false;  // whole numbers the model reads as int64 (token ids)
};

class PyTorchNetwork {
 public:
  // Throws LoomError naming the file when it cannot be loaded.
  PyTorchNetwork(const std::string& path, int threads);
  ~PyTorchNetwork();
  PyTorchNetwork(const PyTorchNetwork&) = delete;
  PyTorchNetwork& operator=(const PyTorchNetwork&) = delete;

  // The model's outputs (a tensor, or a tuple/list of tensors, flattened in
  // order). Throws LoomError when the model rejects the inputs.
  std::vector<TorchTensor> run(const std::vector<TorchTensor>& inputs);
  // The same through the frozen module without optimize_for_inference.
  std::vector<TorchTensor> run_reference(const std::vector<TorchTensor>& inputs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
