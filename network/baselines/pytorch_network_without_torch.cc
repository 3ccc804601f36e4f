// The PyTorch network baseline in a build without LibTorch
// (-DLOOM_WITH_TORCH=OFF): loading a model is an error that says so.
#include "network/baselines/pytorch_network.h"
#include "ir/error.h"

namespace loom {

struct PyTorchNetwork::Impl {};

PyTorchNetwork::PyTorchNetwork(const std::string& path, int) {
  throw LoomError(path + ": the PyTorch baseline needs LibTorch, and this build of Loom has none "
                         "(configured with -DLOOM_WITH_TORCH=OFF)");
}
PyTorchNetwork::~PyTorchNetwork() = default;
std::vector<TorchTensor> PyTorchNetwork::run(const std::vector<TorchTensor>&) { return {}; }
std::vector<TorchTensor> PyTorchNetwork::run_reference(const std::vector<TorchTensor>&) { return {}; }

}  // namespace loom
