// dlsym of the driver's virtual memory entry points (cuda_virtual_memory.h).
#include "cuda_virtual_memory.h"

#include <dlfcn.h>

namespace dragon::harness::cuda_vmm {
namespace {

template <typename F>
bool resolve(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(library, name));
  return fn != nullptr;
}

}  // namespace

const Api* api() {
  static const Api* const resolved = []() -> const Api* {
    // The runtime's CudaDriver has loaded the library already; this takes another reference.
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    static Api table{};
    bool ok = resolve(library, "cuMemGetAllocationGranularity", table.cuMemGetAllocationGranularity) &&
              resolve(library, "cuMemAddressReserve", table.cuMemAddressReserve) &&
              resolve(library, "cuMemAddressFree", table.cuMemAddressFree) &&
              resolve(library, "cuMemCreate", table.cuMemCreate) &&
              resolve(library, "cuMemRelease", table.cuMemRelease) && resolve(library, "cuMemMap", table.cuMemMap) &&
              resolve(library, "cuMemUnmap", table.cuMemUnmap) &&
              resolve(library, "cuMemSetAccess", table.cuMemSetAccess);
    return ok ? &table : nullptr;
  }();
  return resolved;
}

AllocationProp device_allocation() {
  AllocationProp prop;
  prop.type = kAllocationTypePinned;
  prop.location.type = kLocationTypeDevice;
  prop.location.id = 0;
  return prop;
}

}  // namespace dragon::harness::cuda_vmm
