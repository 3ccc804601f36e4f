// What a task is compiled for: "cpu -threads=1 -isa=avx512" or
// "cuda -arch=sm_90". The kinds and their options are one table in
// target.cc; code asks is_gpu()/is_cpu() rather than comparing names.
#pragma once

#include <string>

namespace loom {

struct Target {
  std::string kind = "cpu";  // a kind of target.cc's table: cpu | cuda
  int threads = 1;           // cpu
  std::string isa;           // cpu: the vector width's name, avx512 | avx2 | sse4 ("" = the host's)
  std::string arch;          // cuda, e.g. sm_90
  static Target parse(const std::string& s);  // throws LoomError naming the bad part
  std::string to_string() const;
  // Kernels run on an NVIDIA GPU (CUDA C through NVRTC; GPU sketch rules).
  bool is_gpu() const;
  // Kernels run on this machine's CPU (LLVM; the C export).
  bool is_cpu() const { return !is_gpu(); }
  // Floats per vector of a CPU target: avx512 16, avx2 8, sse4 4, or the
  // host's without -isa. The sketch rules decide with it and the LLVM backend
  // emits vectors of it (1 for cuda); the code is still compiled for the
  // host's CPU features.
  int vector_width() const;
};

}  // namespace loom
