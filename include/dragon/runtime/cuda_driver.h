// The CUDA driver API, reached through dlopen("libcuda.so.1") so that nothing links the
// driver and a machine without a GPU gets a clean failure instead of a load error. Uses
// device 0's primary context. Every failure names the driver call and its error name.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/support/expected.h"

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
  // Device memory free and in total, as the driver sees it: memory other libraries in the
  // process (libtorch's caching allocator) hold counts as used.
  struct MemoryInfo {
    size_t free_bytes = 0, total_bytes = 0;
  };
  Expected<MemoryInfo> memory_info();
  Status copy_to_device(DevicePtr dst, const void* src, size_t bytes);
  Status copy_to_host(void* dst, DevicePtr src, size_t bytes);
  Status copy_on_device(DevicePtr dst, DevicePtr src, size_t bytes);
  // Sets `bytes` bytes to `value`, ordered on the default stream like a launch.
  Status fill_bytes(DevicePtr dst, unsigned char value, size_t bytes);

  // Events on the default stream, for the harness's timer (CUevent handles).
  Expected<void*> create_event();
  void destroy_event(void* event);
  Status record_event(void* event);
  Status wait_event(void* event);  // blocks the host until the event has happened
  Expected<float> elapsed_ms(void* start, void* end);

  // Device 0's properties the harness needs.
  struct Properties {
    int sm_count = 0;
    int64_t l2_bytes = 0;
    int64_t max_shared_bytes_per_block = 0;  // with opt-in
    int compute_capability = 0;              // 90 for sm_90
  };
  Expected<Properties> properties();

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
