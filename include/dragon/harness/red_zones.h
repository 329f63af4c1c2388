// Red zones around a kernel's buffers, so that reads and writes past their ends show
// (docs/harness.md, "Red zones"). Two placements, alternated from run to run:
//   kGuards:  kGuardBytes before and after each tensor, filled with kGuardByte (0xff: a NaN
//             in every float format, -1 in every integer one). A read past the end poisons
//             the output with a NaN no pre-fill holds; a write there is found afterwards.
//   kPageEnd: each tensor at the end of memory of its own (within 255 bytes: the 256-byte
//             alignment of the calling convention), with nothing mapped after it, so the
//             first access beyond faults; on the host a page, on the GPU the driver's
//             allocation granule (2 MiB) with unmapped address space after it.
// The bytes of a zone that are not the tensor's start as kGuardByte and must end so.
// The layout of a run's zones is kernel_runner_protocol.h's; this is the filling, the
// checking and the device allocations that hold them. Not the verifier.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/runtime/cuda_driver.h"
#include "dragon/support/expected.h"

namespace dragon::harness {

enum class RedZones : uint32_t {
  kNone = 0,     // tensors back to back
  kGuards = 1,   // guard bytes before and after each tensor
  kPageEnd = 2,  // each tensor ending where its mapped memory ends
};
std::string_view red_zones_name(RedZones red_zones);  // "none", "guards", "page end"

inline constexpr uint64_t kGuardBytes = 4096;      // each side, kGuards
inline constexpr unsigned char kGuardByte = 0xff;  // NaN as f16, bf16, f32, f64; -1 as an integer

// The host's page size (what kPageEnd zones are aligned to).
uint64_t host_page_bytes();

// Where one tensor lies inside its zone, both as byte ranges of one region.
struct RedZone {
  uint64_t zone_offset = 0, zone_bytes = 0;  // the zone: the tensor and its guard bytes
  uint64_t data_offset = 0, data_bytes = 0;  // the tensor
};

// Sets every byte of each zone that is not its tensor's to kGuardByte.
void fill_red_zones(unsigned char* region, const std::vector<RedZone>& zones);
// "" when every guard byte still holds kGuardByte; else, for each tensor with changed
// guard bytes (`names[i]` names tensor i), how many bytes before and after it changed
// and the farthest one: "wrote 4 bytes past the end of output y (up to byte +3)".
std::string red_zone_violations(const unsigned char* region, const std::vector<RedZone>& zones,
                                const std::vector<std::string>& names);

// One device allocation holding a zone: for kGuards and kNone plain device memory; for
// kPageEnd mapped so that the zone's last byte is the last mapped one, with unmapped
// address space after it (the driver's virtual memory management; where the driver lacks
// it, the zone ends where a whole number of granules allocated for it ends, which is as
// far as plain allocations go). Memory of the mapping before the zone holds kGuardByte.
class DeviceZone {
 public:
  static Expected<DeviceZone> allocate(runtime::CudaDriver* driver, uint64_t zone_bytes, RedZones red_zones);
  DeviceZone(DeviceZone&&) noexcept;
  DeviceZone& operator=(DeviceZone&&) noexcept;
  DeviceZone(const DeviceZone&) = delete;
  DeviceZone& operator=(const DeviceZone&) = delete;
  ~DeviceZone();

  // The device address of the zone's first byte.
  runtime::DevicePtr zone() const { return zone_; }
  // Whether an access past the zone's end faults (kPageEnd with the driver's VMM).
  bool faults_past_end() const { return faults_past_end_; }

  struct Mapping;  // how the memory was obtained, to give it back (device_zone.cc)

 private:
  DeviceZone() = default;
  std::unique_ptr<Mapping> mapping_;
  runtime::DevicePtr zone_ = 0;
  bool faults_past_end_ = false;
};

}  // namespace dragon::harness
