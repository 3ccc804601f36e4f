// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), so
// that binaries run (and GPU tests skip) on machines without a driver or a
// device. No CUDA header: the few types needed are declared in the .cc.
//
//   std::string why;
//   CudaDevice* dev = CudaDevice::open(&why);   // nullptr: no GPU (why says)
//   auto mod = dev->load_module(ptx);
//   ...
// Errors throw CudaError; `sticky()` errors (illegal address, launch
// failure, ...) poison the context: the process should exit and be replaced.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"

namespace loom {

class CudaError : public LoomError {
 public:
  CudaError(const std::string& msg, int code, bool sticky) : LoomError(msg), code_(code), sticky_(sticky) {}
  int code() const { return code_; }
  bool sticky() const { return sticky_; }

 private:
  int code_;
  bool sticky_;
};

class CudaDevice {
 public:
  // Device 0 with its primary context made current; nullptr (and *why) when
  // libcuda cannot be loaded, cuInit fails or there is no device. Opened
  // once per process.
  static CudaDevice* open(std::string* why);

  std::string name() const { return name_; }
  int compute_capability() const { return cc_; }  // e.g. 90

  uint64_t alloc(size_t bytes);
  void free(uint64_t ptr);
  void copy_to_device(uint64_t dst, const void* src, size_t bytes);
  void copy_to_host(void* dst, uint64_t src, size_t bytes);
  void fill_u32(uint64_t dst, uint32_t value, size_t count);

  void* load_module(const std::string& ptx);  // CUmodule
  void unload_module(void* module);
  void* function(void* module, const std::string& name);  // CUfunction
  void launch(void* fn, const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block,
              void** params);
  void synchronize();

  // Milliseconds between two points recorded on the default stream around
  // `body` (CUDA events).
  template <class F>
  double time_ms(F&& body) {
    void* a = event_create();
    void* b = event_create();
    event_record(a);
    body();
    event_record(b);
    double ms = event_elapsed_ms(a, b);
    event_destroy(a);
    event_destroy(b);
    return ms;
  }

 private:
  CudaDevice() = default;
  void* event_create();
  void event_record(void* e);
  double event_elapsed_ms(void* a, void* b);
  void event_destroy(void* e);
  std::string name_;
  int cc_ = 0;
};

}  // namespace loom
