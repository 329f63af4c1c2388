// The driver's virtual memory types as the runner declares them (cuda_virtual_memory.h,
// without the toolkit's headers) agree with cuda.h, field by field: page-end red zones on
// the GPU depend on them and run only on the GPU machine, so a mismatch shows here first.
#include <gtest/gtest.h>

#include <cstddef>

#include "cuda_virtual_memory.h"

#if DRAGON_TEST_CUDA_HEADERS
#include <cuda.h>

namespace dragon::harness::cuda_vmm {
namespace {

TEST(CudaVirtualMemoryAbi, TypesMatchCudaH) {
  EXPECT_EQ(sizeof(MemLocation), sizeof(CUmemLocation));
  EXPECT_EQ(offsetof(MemLocation, id), offsetof(CUmemLocation, id));
  EXPECT_EQ(sizeof(AllocationProp), sizeof(CUmemAllocationProp));
  EXPECT_EQ(offsetof(AllocationProp, requested_handle_types), offsetof(CUmemAllocationProp, requestedHandleTypes));
  EXPECT_EQ(offsetof(AllocationProp, location), offsetof(CUmemAllocationProp, location));
  EXPECT_EQ(offsetof(AllocationProp, win32_handle_metadata), offsetof(CUmemAllocationProp, win32HandleMetaData));
  EXPECT_EQ(offsetof(AllocationProp, alloc_flags), offsetof(CUmemAllocationProp, allocFlags));
  EXPECT_EQ(sizeof(AccessDesc), sizeof(CUmemAccessDesc));
  EXPECT_EQ(offsetof(AccessDesc, flags), offsetof(CUmemAccessDesc, flags));
  EXPECT_EQ(sizeof(Handle), sizeof(CUmemGenericAllocationHandle));
  EXPECT_EQ(sizeof(runtime::DevicePtr), sizeof(CUdeviceptr));
}

TEST(CudaVirtualMemoryAbi, ConstantsMatchCudaH) {
  EXPECT_EQ(sizeof(CUresult), sizeof(int));
  EXPECT_EQ(kAllocationTypePinned, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(kLocationTypeDevice, CU_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(kAccessReadWrite, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_EQ(kGranularityMinimum, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
}

}  // namespace
}  // namespace dragon::harness::cuda_vmm
#else
TEST(CudaVirtualMemoryAbi, TypesMatchCudaH) { GTEST_SKIP() << "this build has no CUDA toolkit headers"; }
#endif
