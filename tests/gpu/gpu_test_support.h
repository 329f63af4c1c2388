// What the GPU tests of dragon bench share: the driver or a clean skip, and a device copy
// of host bytes that releases itself.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#include "dragon/runtime/cuda_driver.h"

namespace dragon::gpu_test {

inline runtime::CudaDriver* driver_or_null() {
  runtime::Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
  return driver.ok() ? driver.value() : nullptr;
}

// A device buffer holding `host`'s bytes, released at scope end.
struct DeviceCopy {
  runtime::CudaDriver* driver;
  runtime::DevicePtr ptr = 0;
  DeviceCopy(runtime::CudaDriver* d, const void* host, size_t bytes) : driver(d) {
    ptr = driver->allocate(bytes).value();
    EXPECT_TRUE(driver->copy_to_device(ptr, host, bytes).ok());
  }
  ~DeviceCopy() { driver->release(ptr); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
};

}  // namespace dragon::gpu_test

// Declares `driver` in a test body, or skips the test where there is no GPU.
#define REQUIRE_GPU(driver)                                        \
  runtime::CudaDriver* driver = ::dragon::gpu_test::driver_or_null(); \
  if (!driver) GTEST_SKIP() << "[SKIP] no CUDA device on this machine"
