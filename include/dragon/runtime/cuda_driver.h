// The CUDA driver API, reached through dlopen("libcuda.so.1") so that nothing links the
// driver and a machine without a GPU gets a clean failure instead of a load error. Uses
// device 0's primary context. Every failure names the driver call and its error name.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/runtime/expected.h"

namespace dragon::runtime {

using DevicePtr = unsigned long long;  // CUdeviceptr

class CudaDriver {
 public:
  // The process's driver, loaded and initialised once; a failure (no libcuda, no device)
  // is returned every time it is asked for.
  static Expected<CudaDriver*> get();

  std::string device_name() const { return device_name_; }
  int device_count() const { return device_count_; }

  Expected<void*> load_module(std::string_view cubin);  // CUmodule
  void unload_module(void* module);
  Expected<void*> get_function(void* module, const std::string& name);  // CUfunction
  // Opts a kernel in to more than 48 KB of dynamic shared memory.
  Status set_max_dynamic_shared_bytes(void* function, int64_t bytes);
  Status launch(void* function, std::array<int64_t, 3> grid, std::array<int64_t, 3> block, int64_t shared_bytes,
                void** params);
  Status synchronize();

  Expected<DevicePtr> allocate(size_t bytes);
  void release(DevicePtr ptr);
  Status copy_to_device(DevicePtr dst, const void* src, size_t bytes);
  Status copy_to_host(void* dst, DevicePtr src, size_t bytes);

  struct Api;  // the driver entry points (cuda_driver.cc)

 private:
  CudaDriver() = default;
  Status bind_context() const;
  RuntimeFailure failure(const char* api, int result, const char* file, int line) const;

  const Api* api_ = nullptr;
  void* context_ = nullptr;
  int device_count_ = 0;
  std::string device_name_;
};

// True when a CUDA device can be used from this process (for GPU tests that skip).
bool cuda_device_available();

}  // namespace dragon::runtime
