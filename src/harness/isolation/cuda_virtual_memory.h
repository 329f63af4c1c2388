// The CUDA driver's virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap,
// ...), reached through dlsym on the driver the runtime has loaded: only page-end red
// zones (red_zones.h) need it. Types are declared from the driver API's documented ABI,
// as runtime/cuda_driver.cc does, so this builds without the toolkit's headers (a test
// compares them with cuda.h where it is present).
#pragma once

#include <cstddef>
#include <cstdint>

#include "dragon/runtime/cuda_driver.h"

namespace dragon::harness::cuda_vmm {

struct MemLocation {        // CUmemLocation
  int type = 0;             // CUmemLocationType
  int id = 0;
};
struct AllocationProp {     // CUmemAllocationProp (v1)
  int type = 0;             // CUmemAllocationType
  int requested_handle_types = 0;
  MemLocation location;
  void* win32_handle_metadata = nullptr;
  struct {
    unsigned char compression_type = 0;
    unsigned char gpu_direct_rdma_capable = 0;
    unsigned short usage = 0;
    unsigned char reserved[4] = {};
  } alloc_flags;
};
struct AccessDesc {         // CUmemAccessDesc
  MemLocation location;
  int flags = 0;            // CUmemAccess_flags
};

inline constexpr int kAllocationTypePinned = 0x1;   // CU_MEM_ALLOCATION_TYPE_PINNED
inline constexpr int kLocationTypeDevice = 0x1;     // CU_MEM_LOCATION_TYPE_DEVICE
inline constexpr int kAccessReadWrite = 0x3;        // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
inline constexpr int kGranularityMinimum = 0x0;     // CU_MEM_ALLOC_GRANULARITY_MINIMUM

using Handle = unsigned long long;  // CUmemGenericAllocationHandle

struct Api {
  int (*cuMemGetAllocationGranularity)(size_t*, const AllocationProp*, int);
  int (*cuMemAddressReserve)(runtime::DevicePtr*, size_t, size_t, runtime::DevicePtr, unsigned long long);
  int (*cuMemAddressFree)(runtime::DevicePtr, size_t);
  int (*cuMemCreate)(Handle*, size_t, const AllocationProp*, unsigned long long);
  int (*cuMemRelease)(Handle);
  int (*cuMemMap)(runtime::DevicePtr, size_t, size_t, Handle, unsigned long long);
  int (*cuMemUnmap)(runtime::DevicePtr, size_t);
  int (*cuMemSetAccess)(runtime::DevicePtr, size_t, const AccessDesc*, size_t);
};

// The entry points, resolved once; nullptr where the driver lacks one of them.
const Api* api();

// Device 0's allocation properties (what the runtime's CudaDriver uses).
AllocationProp device_allocation();

}  // namespace dragon::harness::cuda_vmm
