#include "network/baselines/pytorch_network.h"

#include <torch/script.h>
#include <torch/torch.h>

#include "costmodel/blas_kernels.h"
#include "ir/error.h"

namespace loom {

struct PyTorchNetwork::Impl {
  torch::jit::Module frozen, optimized;
};

PyTorchNetwork::PyTorchNetwork(const std::string& path, int threads) : impl_(std::make_unique<Impl>()) {
  // at::set_num_threads leaves OpenBLAS on every core: a one-thread
  // PyTorch matmul would run on two, and its idle worker spin beside Loom.
  at::set_num_threads(threads);
  set_openblas_threads(threads);
  try {
    impl_->frozen = torch::jit::load(path);
    impl_->frozen.eval();
    // The saved file is frozen but not optimized: prepacked MKLDNN weights
    // are not serializable, so they are made here (on a copy: the
    // optimization rewrites the module it is given).
    torch::jit::Module copy = impl_->frozen.clone();
    impl_->optimized = torch::jit::optimize_for_inference(copy);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw LoomError(path + ": cannot load the TorchScript model (" + msg.substr(0, msg.find('\n')) + ")");
  }
}

PyTorchNetwork::~PyTorchNetwork() = default;

namespace {

void flatten_outputs(const c10::IValue& v, std::vector<TorchTensor>& out) {
  if (v.isTensor()) {
    torch::Tensor t = v.toTensor().contiguous().to(torch::kFloat32);
    TorchTensor r;
    r.shape.assign(t.sizes().begin(), t.sizes().end());
    r.data.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    out.push_back(std::move(r));
  } else if (v.isTuple()) {
    for (const auto& e : v.toTuple()->elements()) flatten_outputs(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toList()) flatten_outputs(e, out);
  } else {
    throw LoomError("the TorchScript model returned a " + v.tagKind() + ", expected tensors");
  }
}

std::vector<TorchTensor> forward(torch::jit::Module& module, const std::vector<TorchTensor>& inputs) {
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> args;
  for (const auto& in : inputs)
    args.emplace_back(torch::from_blob(const_cast<float*>(in.data.data()), in.shape, torch::kFloat32)
                          .to(in.integer ? torch::kInt64 : torch::kFloat32, /*non_blocking=*/false, /*copy=*/true));
  std::vector<TorchTensor> out;
  try {
    flatten_outputs(module.forward(args), out);
  } catch (const LoomError&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw LoomError("the TorchScript model failed on the inputs (" + msg.substr(0, msg.find('\n')) + ")");
  }
  return out;
}

}  // namespace

std::vector<TorchTensor> PyTorchNetwork::run(const std::vector<TorchTensor>& inputs) {
  return forward(impl_->optimized, inputs);
}

std::vector<TorchTensor> PyTorchNetwork::run_reference(const std::vector<TorchTensor>& inputs) {
  return forward(impl_->frozen, inputs);
}


}  // namespace loom
