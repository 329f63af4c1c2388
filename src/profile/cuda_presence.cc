// Driver probe: libcuda.so.1, cuInit, cuDeviceGetCount.
#include "dragon/profile/cuda_presence.h"

#include <dlfcn.h>

namespace dragon::profile {

std::optional<std::string> why_no_cuda_gpu() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* error = dlerror();
    return std::string("no CUDA driver (libcuda.so.1 cannot be loaded: ") + (error ? error : "unknown") + ")";
  }
  using InitFn = int (*)(unsigned int);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  if (init == nullptr || count == nullptr) return std::string("libcuda.so.1 lacks cuInit or cuDeviceGetCount");
  int status = init(0);
  if (status != 0) return "the CUDA driver failed to initialise (cuInit error " + std::to_string(status) + ")";
  int devices = 0;
  if (count(&devices) != 0 || devices == 0) return std::string("the CUDA driver sees no GPU");
  return std::nullopt;
}

}  // namespace dragon::profile
