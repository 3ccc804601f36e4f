// Shared by the CUDA baselines (cublas.cc, cudnn.cc) only: device buffers,
// CUDA-event timing with the same protocol as Loom's GPU candidates
// (measure/worker/gpu_session.cc), and the "no GPU device" check.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "experiments/baselines/baseline.h"
#include "ir/reference.h"

namespace loom::cuda_baseline {

// "" when a device is usable, else why not ("no GPU device: ...").
inline std::string device_problem() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no GPU device: ") + cudaGetErrorString(e);
  if (n == 0) return "no GPU device";
  return "";
}

struct DeviceBuffer {
  float* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    if (cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(float)) != cudaSuccess) throw LoomError("cudaMalloc failed");
  }
  DeviceBuffer(const std::vector<float>& h) : DeviceBuffer(h.size()) {
    cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<float> read() const {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
  }
};

// Runs `run` once, checks `output()` against `want`, then times it: a
// warm-up, `repeat` groups of back-to-back runs lasting >= min_repeat_ms
// between CUDA events; costs are per-run means of each group.
inline BaselineResult measure(BaselineResult r, const std::function<void()>& run,
                              const std::function<std::vector<float>()>& output, const std::vector<float>& want,
                              const TimingOptions& timing) {
  run();
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    r.supported = false;
    r.reason = std::string("run failed: ") + cudaGetErrorString(e);
    return r;
  }
  std::vector<float> got = output();
  r.check = got.size() == want.size() ? compare_outputs(got, want) : "output size differs from the reference";
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto group = [&](int n) {
    cudaEventRecord(a);
    for (int i = 0; i < n; ++i) run();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return static_cast<double>(ms) / n;
  };
  double once = group(1);
  int n = static_cast<int>(std::clamp(timing.min_repeat_ms / std::max(once, 1e-3), 1.0, 100000.0));
  for (int g = 0; g < std::max(1, timing.repeat); ++g) r.costs_s.push_back(group(n) / 1e3);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  r.median_s = median(r.costs_s);
  r.supported = true;
  return r;
}

inline int64_t param(const Task& t, const char* k) { return t.params.at(k).get<int64_t>(); }

}  // namespace loom::cuda_baseline
