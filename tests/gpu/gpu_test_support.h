// What the GPU tests of dragon bench share: the driver or a clean skip, and device copies
// of host bytes that release themselves.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "dragon/runtime/cuda_driver.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::gpu_test {

inline runtime::CudaDriver* driver_or_null() {
  Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
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

// Every argument of a function copied to the device, in parameter order: `ptrs` is what a
// launch or a library call takes.
struct DeviceArguments {
  std::vector<std::unique_ptr<DeviceCopy>> copies;
  std::vector<runtime::DevicePtr> ptrs;
  DeviceArguments(runtime::CudaDriver* driver, const std::vector<tensor::HostTensor>& args) {
    for (const tensor::HostTensor& t : args) {
      copies.push_back(std::make_unique<DeviceCopy>(driver, t.data(), static_cast<size_t>(t.size_bytes())));
      ptrs.push_back(copies.back()->ptr);
    }
  }
};

}  // namespace dragon::gpu_test

// Declares `driver` in a test body, or skips the test where there is no GPU.
#define REQUIRE_GPU(driver)                                        \
  runtime::CudaDriver* driver = ::dragon::gpu_test::driver_or_null(); \
  if (!driver) GTEST_SKIP() << "[SKIP] no CUDA device on this machine"
