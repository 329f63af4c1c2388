// The CUDA driver through dlopen (cuda_driver.h). The few types and constants needed are
// declared here from the driver API's documented ABI, so this file builds without the
// toolkit's headers.
#include "dragon/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <utility>

namespace dragon::runtime {

using CUresult = int;
using CUdevice = int;
constexpr int kCuFuncAttributeMaxDynamicSharedSizeBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// CUdevice_attribute values.
constexpr int kCuDeviceAttributeMultiprocessorCount = 16;
constexpr int kCuDeviceAttributeL2CacheSize = 38;
constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;
constexpr int kCuDeviceAttributeComputeCapabilityMinor = 76;
constexpr int kCuDeviceAttributeMaxSharedMemoryPerBlockOptin = 97;

struct CudaDriver::Api {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(void**, CUdevice);
  CUresult (*cuCtxSetCurrent)(void*);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(void**, const void*);
  CUresult (*cuModuleUnload)(void*);
  CUresult (*cuModuleGetFunction)(void**, void*, const char*);
  CUresult (*cuFuncSetAttribute)(void*, int, int);
  CUresult (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**);
  CUresult (*cuMemAlloc)(DevicePtr*, size_t);
  CUresult (*cuMemFree)(DevicePtr);
  CUresult (*cuMemcpyHtoD)(DevicePtr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, DevicePtr, size_t);
  CUresult (*cuMemcpyDtoD)(DevicePtr, DevicePtr, size_t);
  CUresult (*cuMemsetD8)(DevicePtr, unsigned char, size_t);
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuEventCreate)(void**, unsigned int);
  CUresult (*cuEventDestroy)(void*);
  CUresult (*cuEventRecord)(void*, void*);
  CUresult (*cuEventSynchronize)(void*);
  CUresult (*cuEventElapsedTime)(float*, void*, void*);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

namespace {

template <typename F>
bool resolve(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(library, name));
  return fn != nullptr;
}

}  // namespace

RuntimeFailure CudaDriver::failure(const char* api, int result, const char* file, int line) const {
  const char* name = "unknown";
  const char* text = "";
  if (api_ && api_->cuGetErrorName) api_->cuGetErrorName(result, &name);
  if (api_ && api_->cuGetErrorString) api_->cuGetErrorString(result, &text);
  return RuntimeFailure{api, std::string(name) + " (" + std::to_string(result) + "): " + text, "",
                        std::string(file) + ":" + std::to_string(line)};
}

#define DRAGON_CU(call, api_name)                                               \
  do {                                                                          \
    if (CUresult dragon_rc = (call); dragon_rc != 0) {                          \
      return failure(api_name, dragon_rc, __FILE__, __LINE__);                  \
    }                                                                           \
  } while (0)

Expected<CudaDriver*> CudaDriver::get() {
  static std::once_flag once;
  static std::optional<Expected<CudaDriver*>> instance;
  std::call_once(once, [] {
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      instance.emplace(DRAGON_RUNTIME_FAILURE("dlopen", "cannot load libcuda.so.1 (no NVIDIA driver here)",
                                              ::dlerror()));
      return;
    }
    static Api api{};
    bool ok = resolve(library, "cuInit", api.cuInit) && resolve(library, "cuDeviceGetCount", api.cuDeviceGetCount) &&
              resolve(library, "cuDeviceGet", api.cuDeviceGet) &&
              resolve(library, "cuDeviceGetName", api.cuDeviceGetName) &&
              resolve(library, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain) &&
              resolve(library, "cuCtxSetCurrent", api.cuCtxSetCurrent) &&
              resolve(library, "cuCtxSynchronize", api.cuCtxSynchronize) &&
              resolve(library, "cuModuleLoadData", api.cuModuleLoadData) &&
              resolve(library, "cuModuleUnload", api.cuModuleUnload) &&
              resolve(library, "cuModuleGetFunction", api.cuModuleGetFunction) &&
              resolve(library, "cuFuncSetAttribute", api.cuFuncSetAttribute) &&
              resolve(library, "cuLaunchKernel", api.cuLaunchKernel) &&
              resolve(library, "cuMemAlloc_v2", api.cuMemAlloc) && resolve(library, "cuMemFree_v2", api.cuMemFree) &&
              resolve(library, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD) &&
              resolve(library, "cuMemcpyDtoH_v2", api.cuMemcpyDtoH) &&
              resolve(library, "cuMemcpyDtoD_v2", api.cuMemcpyDtoD) &&
              resolve(library, "cuMemsetD8_v2", api.cuMemsetD8) &&
              resolve(library, "cuMemGetInfo_v2", api.cuMemGetInfo) &&
              resolve(library, "cuEventCreate", api.cuEventCreate) &&
              resolve(library, "cuEventDestroy_v2", api.cuEventDestroy) &&
              resolve(library, "cuEventRecord", api.cuEventRecord) &&
              resolve(library, "cuEventSynchronize", api.cuEventSynchronize) &&
              // CUDA 12.8 added _v2 (it also reports events recorded out of order); older
              // drivers have only the first.
              (resolve(library, "cuEventElapsedTime_v2", api.cuEventElapsedTime) ||
               resolve(library, "cuEventElapsedTime", api.cuEventElapsedTime)) &&
              resolve(library, "cuDeviceGetAttribute", api.cuDeviceGetAttribute) &&
              resolve(library, "cuGetErrorName", api.cuGetErrorName) &&
              resolve(library, "cuGetErrorString", api.cuGetErrorString);
    if (!ok) {
      instance.emplace(DRAGON_RUNTIME_FAILURE("dlsym", "libcuda.so.1 lacks a driver entry point", ::dlerror()));
      return;
    }
    auto* driver = new CudaDriver();  // lives for the process, like the driver itself
    driver->api_ = &api;
    Expected<CudaDriver*> result = [&]() -> Expected<CudaDriver*> {
      if (CUresult rc = api.cuInit(0); rc != 0) return driver->failure("cuInit", rc, __FILE__, __LINE__);
      if (CUresult rc = api.cuDeviceGetCount(&driver->device_count_); rc != 0) {
        return driver->failure("cuDeviceGetCount", rc, __FILE__, __LINE__);
      }
      if (driver->device_count_ == 0) return DRAGON_RUNTIME_FAILURE("cuDeviceGetCount", "no CUDA device", "");
      CUdevice device = 0;
      if (CUresult rc = api.cuDeviceGet(&device, 0); rc != 0) return driver->failure("cuDeviceGet", rc, __FILE__, __LINE__);
      char name[256] = {};
      if (api.cuDeviceGetName(name, sizeof(name), device) == 0) driver->device_name_ = name;
      if (CUresult rc = api.cuDevicePrimaryCtxRetain(&driver->context_, device); rc != 0) {
        return driver->failure("cuDevicePrimaryCtxRetain", rc, __FILE__, __LINE__);
      }
      return driver;
    }();
    instance.emplace(std::move(result));
  });
  return *instance;
}

bool cuda_device_available() { return CudaDriver::get().ok(); }

Status CudaDriver::bind_context() const {
  DRAGON_CU(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  return {};
}

Expected<void*> CudaDriver::load_module(std::string_view cubin) {
  if (Status s = bind_context(); !s) return s.error();
  void* module = nullptr;
  DRAGON_CU(api_->cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  return module;
}

void CudaDriver::unload_module(void* module) {
  if (bind_context()) api_->cuModuleUnload(module);
}

Expected<void*> CudaDriver::get_function(void* module, const std::string& name) {
  void* function = nullptr;
  if (CUresult rc = api_->cuModuleGetFunction(&function, module, name.c_str()); rc != 0) {
    RuntimeFailure f = failure("cuModuleGetFunction", rc, __FILE__, __LINE__);
    f.message += " (kernel " + name + ")";
    return f;
  }
  return function;
}

Status CudaDriver::set_max_dynamic_shared_bytes(void* function, int64_t bytes) {
  DRAGON_CU(api_->cuFuncSetAttribute(function, kCuFuncAttributeMaxDynamicSharedSizeBytes, static_cast<int>(bytes)),
            "cuFuncSetAttribute");
  return {};
}

Status CudaDriver::launch(void* function, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
                          int64_t shared_bytes, void** params) {
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuLaunchKernel(function, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                                 static_cast<unsigned>(grid[2]), static_cast<unsigned>(block[0]),
                                 static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]),
                                 static_cast<unsigned>(shared_bytes), nullptr, params, nullptr),
            "cuLaunchKernel");
  return {};
}

Status CudaDriver::synchronize() {
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuCtxSynchronize(), "cuCtxSynchronize");
  return {};
}

Expected<DevicePtr> CudaDriver::allocate(size_t bytes) {
  if (Status s = bind_context(); !s) return s.error();
  DevicePtr ptr = 0;
  DRAGON_CU(api_->cuMemAlloc(&ptr, bytes == 0 ? 1 : bytes), "cuMemAlloc");
  return ptr;
}

void CudaDriver::release(DevicePtr ptr) {
  if (ptr != 0 && bind_context()) api_->cuMemFree(ptr);
}

Expected<CudaDriver::MemoryInfo> CudaDriver::memory_info() {
  if (Status s = bind_context(); !s) return s.error();
  MemoryInfo info;
  DRAGON_CU(api_->cuMemGetInfo(&info.free_bytes, &info.total_bytes), "cuMemGetInfo");
  return info;
}

Status CudaDriver::copy_to_device(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes == 0) return {};
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  return {};
}

Status CudaDriver::copy_to_host(void* dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return {};
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  return {};
}

Status CudaDriver::copy_on_device(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return {};
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  return {};
}

Status CudaDriver::fill_bytes(DevicePtr dst, unsigned char value, size_t bytes) {
  if (bytes == 0) return {};
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuMemsetD8(dst, value, bytes), "cuMemsetD8");
  return {};
}

Expected<void*> CudaDriver::create_event() {
  if (Status s = bind_context(); !s) return s.error();
  void* event = nullptr;
  DRAGON_CU(api_->cuEventCreate(&event, 0), "cuEventCreate");
  return event;
}

void CudaDriver::destroy_event(void* event) {
  if (event != nullptr && bind_context()) api_->cuEventDestroy(event);
}

Status CudaDriver::record_event(void* event) {
  if (Status s = bind_context(); !s) return s;
  DRAGON_CU(api_->cuEventRecord(event, nullptr), "cuEventRecord");
  return {};
}

Status CudaDriver::wait_event(void* event) {
  DRAGON_CU(api_->cuEventSynchronize(event), "cuEventSynchronize");
  return {};
}

Expected<float> CudaDriver::elapsed_ms(void* start, void* end) {
  float ms = 0;
  DRAGON_CU(api_->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

Expected<CudaDriver::Properties> CudaDriver::properties() {
  if (Status s = bind_context(); !s) return s.error();
  auto attribute = [&](int which, int& value) -> Status {
    DRAGON_CU(api_->cuDeviceGetAttribute(&value, which, 0), "cuDeviceGetAttribute");
    return {};
  };
  int sm = 0, l2 = 0, major = 0, minor = 0, shared = 0;
  for (auto [which, value] : {std::pair{kCuDeviceAttributeMultiprocessorCount, &sm},
                              std::pair{kCuDeviceAttributeL2CacheSize, &l2},
                              std::pair{kCuDeviceAttributeComputeCapabilityMajor, &major},
                              std::pair{kCuDeviceAttributeComputeCapabilityMinor, &minor},
                              std::pair{kCuDeviceAttributeMaxSharedMemoryPerBlockOptin, &shared}}) {
    if (Status s = attribute(which, *value); !s) return s.error();
  }
  return Properties{sm, l2, shared, major * 10 + minor};
}

}  // namespace dragon::runtime
