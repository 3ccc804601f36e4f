#include "codegen/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace loom {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using Handle = void*;

struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(Handle*, CUdevice);
  CUresult (*cuCtxSetCurrent)(Handle);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuModuleLoadData)(Handle*, const void*);
  CUresult (*cuModuleUnload)(Handle);
  CUresult (*cuModuleGetFunction)(Handle*, Handle, const char*);
  CUresult (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             Handle, void**, void**);
  CUresult (*cuEventCreate)(Handle*, unsigned);
  CUresult (*cuEventRecord)(Handle, Handle);
  CUresult (*cuEventSynchronize)(Handle);
  CUresult (*cuEventElapsedTime)(float*, Handle, Handle);
  CUresult (*cuEventDestroy)(Handle);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

Api g_api;

template <class T>
bool sym(void* lib, T& fn, const char* name, std::string* missing) {
  fn = reinterpret_cast<T>(dlsym(lib, name));
  if (!fn && missing->empty()) *missing = name;
  return fn != nullptr;
}

// Errors after which the context is unusable (CUDA's "sticky" errors).
bool is_sticky(CUresult r) {
  return r == 700 /*ILLEGAL_ADDRESS*/ || r == 714 /*HARDWARE_STACK_ERROR*/ || r == 715 /*ILLEGAL_INSTRUCTION*/ ||
         r == 716 /*MISALIGNED_ADDRESS*/ || r == 717 /*INVALID_ADDRESS_SPACE*/ || r == 718 /*INVALID_PC*/ ||
         r == 719 /*LAUNCH_FAILED*/ || r == 702 /*LAUNCH_TIMEOUT*/ || r == 999 /*UNKNOWN*/;
}

void check(CUresult r, const char* what) {
  if (r == 0) return;
  const char* s = nullptr;
  if (g_api.cuGetErrorString) g_api.cuGetErrorString(r, &s);
  throw CudaError(std::string(what) + ": CUDA error " + std::to_string(r) + " (" + (s ? s : "?") + ")", r,
                  is_sticky(r));
}

}  // namespace

CudaDevice* CudaDevice::open(std::string* why) {
  static std::once_flag once;
  static CudaDevice* dev = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      reason = "no GPU device: cannot load libcuda.so.1 (no NVIDIA driver)";
      return;
    }
    std::string missing;
    Api& a = g_api;
    sym(lib, a.cuInit, "cuInit", &missing);
    sym(lib, a.cuDeviceGetCount, "cuDeviceGetCount", &missing);
    sym(lib, a.cuDeviceGet, "cuDeviceGet", &missing);
    sym(lib, a.cuDeviceGetName, "cuDeviceGetName", &missing);
    sym(lib, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", &missing);
    sym(lib, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", &missing);
    sym(lib, a.cuCtxSetCurrent, "cuCtxSetCurrent", &missing);
    sym(lib, a.cuCtxSynchronize, "cuCtxSynchronize", &missing);
    sym(lib, a.cuMemAlloc, "cuMemAlloc_v2", &missing);
    sym(lib, a.cuMemFree, "cuMemFree_v2", &missing);
    sym(lib, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2", &missing);
    sym(lib, a.cuMemcpyDtoH, "cuMemcpyDtoH_v2", &missing);
    sym(lib, a.cuMemsetD32, "cuMemsetD32_v2", &missing);
    sym(lib, a.cuModuleLoadData, "cuModuleLoadData", &missing);
    sym(lib, a.cuModuleUnload, "cuModuleUnload", &missing);
    sym(lib, a.cuModuleGetFunction, "cuModuleGetFunction", &missing);
    sym(lib, a.cuLaunchKernel, "cuLaunchKernel", &missing);
    sym(lib, a.cuEventCreate, "cuEventCreate", &missing);
    sym(lib, a.cuEventRecord, "cuEventRecord", &missing);
    sym(lib, a.cuEventSynchronize, "cuEventSynchronize", &missing);
    a.cuEventElapsedTime = reinterpret_cast<decltype(a.cuEventElapsedTime)>(dlsym(lib, "cuEventElapsedTime_v2"));
    if (!a.cuEventElapsedTime) sym(lib, a.cuEventElapsedTime, "cuEventElapsedTime", &missing);
    sym(lib, a.cuEventDestroy, "cuEventDestroy_v2", &missing);
    sym(lib, a.cuGetErrorString, "cuGetErrorString", &missing);
    if (!missing.empty()) {
      reason = "no GPU device: libcuda.so.1 lacks " + missing;
      return;
    }
    CUresult r = a.cuInit(0);
    if (r != 0) {
      reason = "no GPU device: cuInit failed with CUDA error " + std::to_string(r);
      return;
    }
    int n = 0;
    if (a.cuDeviceGetCount(&n) != 0 || n == 0) {
      reason = "no GPU device: the driver reports no device";
      return;
    }
    CUdevice d;
    Handle ctx = nullptr;
    if (a.cuDeviceGet(&d, 0) != 0 || a.cuDevicePrimaryCtxRetain(&ctx, d) != 0 || a.cuCtxSetCurrent(ctx) != 0) {
      reason = "no GPU device: cannot create a context on device 0";
      return;
    }
    auto* out = new CudaDevice();
    char name[256] = {0};
    a.cuDeviceGetName(name, sizeof(name), d);
    out->name_ = name;
    int major = 0, minor = 0;
    a.cuDeviceGetAttribute(&major, 75 /*COMPUTE_CAPABILITY_MAJOR*/, d);
    a.cuDeviceGetAttribute(&minor, 76 /*COMPUTE_CAPABILITY_MINOR*/, d);
    out->cc_ = major * 10 + minor;
    dev = out;
  });
  if (!dev && why) *why = reason;
  return dev;
}

uint64_t CudaDevice::alloc(size_t bytes) {
  CUdeviceptr p = 0;
  check(g_api.cuMemAlloc(&p, bytes ? bytes : 4), "cuMemAlloc");
  return p;
}
void CudaDevice::free(uint64_t ptr) {
  if (ptr) g_api.cuMemFree(ptr);
}
void CudaDevice::copy_to_device(uint64_t dst, const void* src, size_t bytes) {
  check(g_api.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}
void CudaDevice::copy_to_host(void* dst, uint64_t src, size_t bytes) {
  check(g_api.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}
void CudaDevice::fill_u32(uint64_t dst, uint32_t value, size_t count) {
  check(g_api.cuMemsetD32(dst, value, count), "cuMemsetD32");
}
void* CudaDevice::load_module(const std::string& ptx) {
  Handle m = nullptr;
  check(g_api.cuModuleLoadData(&m, ptx.c_str()), "cuModuleLoadData");
  return m;
}
void CudaDevice::unload_module(void* module) {
  if (module) g_api.cuModuleUnload(module);
}
void* CudaDevice::function(void* module, const std::string& name) {
  Handle f = nullptr;
  check(g_api.cuModuleGetFunction(&f, module, name.c_str()), ("cuModuleGetFunction " + name).c_str());
  return f;
}
void CudaDevice::launch(void* fn, const std::array<int64_t, 3>& g, const std::array<int64_t, 3>& b,
                        void** params) {
  check(g_api.cuLaunchKernel(fn, static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]),
                             static_cast<unsigned>(g[2]), static_cast<unsigned>(b[0]),
                             static_cast<unsigned>(b[1]), static_cast<unsigned>(b[2]), 0, nullptr, params,
                             nullptr),
        "cuLaunchKernel");
}
void CudaDevice::synchronize() { check(g_api.cuCtxSynchronize(), "kernel execution"); }
void* CudaDevice::event_create() {
  Handle e = nullptr;
  check(g_api.cuEventCreate(&e, 0), "cuEventCreate");
  return e;
}
void CudaDevice::event_record(void* e) { check(g_api.cuEventRecord(e, nullptr), "cuEventRecord"); }
double CudaDevice::event_elapsed_ms(void* a, void* b) {
  check(g_api.cuEventSynchronize(b), "kernel execution");
  float ms = 0;
  check(g_api.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  return ms;
}
void CudaDevice::event_destroy(void* e) { g_api.cuEventDestroy(e); }

}  // namespace loom
