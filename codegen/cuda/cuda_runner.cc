#include "codegen/cuda/cuda_runner.h"

#include <cstring>

namespace loom {

CudaModuleRunner::CudaModuleRunner(CudaDevice& dev, const CudaModuleSource& m, const std::string& ptx)
    : dev_(dev), m_(m) {
  try {
    module_ = dev_.load_module(ptx);
    for (const auto& k : m.kernels) functions_.push_back(dev_.function(module_, k.name));
    for (const auto& name : m.param_names()) {
      const Buffer* b = nullptr;
      for (const auto& x : m.args) if (x.name == name) b = &x;
      for (const auto& x : m.temps) if (x.name == name) b = &x;
      size_t n = static_cast<size_t>(std::max<int64_t>(b->size(), 1));
      uint64_t p = dev_.alloc(n * sizeof(float));
      buffers_[name] = {p, n};
      param_ptrs_.push_back(p);
    }
  } catch (...) {
    for (auto& [name, b] : buffers_) dev_.free(b.first);
    dev_.unload_module(module_);
    throw;
  }
  for (auto& p : param_ptrs_) params_.push_back(&p);
}

CudaModuleRunner::~CudaModuleRunner() {
  for (auto& [name, b] : buffers_) dev_.free(b.first);
  dev_.unload_module(module_);
}

void CudaModuleRunner::write(const std::string& name, const std::vector<float>& data) {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw LoomError("CUDA runner: no buffer " + name);
  if (data.size() != it->second.second)
    throw LoomError("CUDA runner: buffer " + name + " has " + std::to_string(it->second.second) +
                    " elements, got " + std::to_string(data.size()));
  dev_.copy_to_device(it->second.first, data.data(), data.size() * sizeof(float));
}

void CudaModuleRunner::fill_nan(const std::string& name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw LoomError("CUDA runner: no buffer " + name);
  dev_.fill_u32(it->second.first, 0x7fc00000u, it->second.second);
}

std::vector<float> CudaModuleRunner::read(const std::string& name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw LoomError("CUDA runner: no buffer " + name);
  std::vector<float> out(it->second.second);
  dev_.copy_to_host(out.data(), it->second.first, out.size() * sizeof(float));
  return out;
}

void CudaModuleRunner::launch() {
  for (size_t i = 0; i < functions_.size(); ++i)
    dev_.launch(functions_[i], m_.kernels[i].grid, m_.kernels[i].block, params_.data());
}

void CudaModuleRunner::run() {
  launch();
  dev_.synchronize();
}

double CudaModuleRunner::time_ms(int n) {
  if (n < 1) n = 1;
  double ms = dev_.time_ms([&] {
    for (int i = 0; i < n; ++i) launch();
  });
  return ms / n;
}

}  // namespace loom
