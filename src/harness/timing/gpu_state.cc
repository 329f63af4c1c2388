// read_gpu_state (gpu_timer.h) through NVML, loaded with dlopen like the driver: no header
// or library is needed to build, and a machine without NVML answers "unknown". The few
// entry points are declared from NVML's documented, stable C ABI.
#include <dlfcn.h>

#include <fmt/format.h>

#include "dragon/harness/gpu_timer.h"

namespace dragon::harness {
namespace {

using NvmlReturn = int;     // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = void*;   // nvmlDevice_t
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlClockMemory = 2;     // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*device_by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*device_name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
};

template <typename F>
bool resolve(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(library, name));
  return fn != nullptr;
}

const Nvml* load_nvml() {
  static const Nvml* nvml = []() -> const Nvml* {
    void* library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    static Nvml api;
    bool ok = resolve(library, "nvmlInit_v2", api.init) &&
              resolve(library, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index) &&
              resolve(library, "nvmlDeviceGetName", api.device_name) &&
              resolve(library, "nvmlDeviceGetClockInfo", api.clock) &&
              resolve(library, "nvmlDeviceGetMaxClockInfo", api.max_clock) &&
              resolve(library, "nvmlDeviceGetTemperature", api.temperature) &&
              resolve(library, "nvmlSystemGetDriverVersion", api.driver_version);
    if (!ok || api.init() != 0) return nullptr;
    return &api;
  }();
  return nvml;
}

}  // namespace

GpuState read_gpu_state() {
  GpuState state{.name = "unknown", .driver_version = "unknown"};
  const Nvml* nvml = load_nvml();
  NvmlDevice device = nullptr;
  if (nvml == nullptr || nvml->device_by_index(0, &device) != 0) return state;
  char text[256] = {};
  if (nvml->device_name(device, text, sizeof(text)) == 0) state.name = text;
  if (nvml->driver_version(text, sizeof(text)) == 0) state.driver_version = text;
  unsigned value = 0;
  if (nvml->clock(device, kNvmlClockSm, &value) == 0) state.sm_clock_mhz = static_cast<int>(value);
  if (nvml->max_clock(device, kNvmlClockSm, &value) == 0) state.max_sm_clock_mhz = static_cast<int>(value);
  if (nvml->clock(device, kNvmlClockMemory, &value) == 0) state.memory_clock_mhz = static_cast<int>(value);
  if (nvml->temperature(device, kNvmlTemperatureGpu, &value) == 0) state.temperature_c = static_cast<int>(value);
  return state;
}

std::string GpuState::describe() const {
  return fmt::format("{}, SM clock {}/{} MHz, memory clock {} MHz, {} C, driver {}", name, sm_clock_mhz,
                     max_sm_clock_mhz, memory_clock_mhz, temperature_c, driver_version);
}

}  // namespace dragon::harness
