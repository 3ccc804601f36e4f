// Runs a CUDA module (codegen/cuda/cuda_source.h) on the device: device
// buffers for every argument and root temp, the kernels launched in order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/cuda_source.h"

namespace loom {

class CudaModuleRunner {
 public:
  // Loads the PTX and allocates the buffers. Throws CudaError.
  CudaModuleRunner(CudaDevice& dev, const CudaModuleSource& m, const std::string& ptx);
  ~CudaModuleRunner();
  CudaModuleRunner(const CudaModuleRunner&) = delete;
  CudaModuleRunner& operator=(const CudaModuleRunner&) = delete;

  // Copies host data into the buffer `name` (an argument); sizes must match.
  void write(const std::string& name, const std::vector<float>& data);
  // Fills every argument not written since construction, and every temp,
  // with NaN (so unwritten outputs are caught).
  void fill_nan(const std::string& name);
  std::vector<float> read(const std::string& name);
  // Launches every kernel once (asynchronously).
  void launch();
  // Launches and waits; a failing kernel throws CudaError.
  void run();
  // Mean milliseconds per run over `n` back-to-back runs (CUDA events).
  double time_ms(int n);

 private:
  CudaDevice& dev_;
  const CudaModuleSource& m_;
  void* module_ = nullptr;
  std::vector<void*> functions_;
  std::map<std::string, std::pair<uint64_t, size_t>> buffers_;  // ptr, floats
  std::vector<uint64_t> param_ptrs_;
  std::vector<void*> params_;
};

}  // namespace loom
