// Filling and checking red zones (red_zones.h).
#include "dragon/harness/red_zones.h"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace dragon::harness {

std::string_view red_zones_name(RedZones red_zones) {
  switch (red_zones) {
    case RedZones::kNone: return "none";
    case RedZones::kGuards: return "guards";
    case RedZones::kPageEnd: return "page end";
  }
  return "unknown";
}

uint64_t host_page_bytes() {
  static const uint64_t page = [] {
    long bytes = ::sysconf(_SC_PAGESIZE);
    return bytes > 0 ? static_cast<uint64_t>(bytes) : uint64_t{4096};
  }();
  return page;
}

void fill_red_zones(unsigned char* region, const std::vector<RedZone>& zones) {
  for (const RedZone& z : zones) {
    std::memset(region + z.zone_offset, kGuardByte, z.data_offset - z.zone_offset);
    const uint64_t data_end = z.data_offset + z.data_bytes, zone_end = z.zone_offset + z.zone_bytes;
    std::memset(region + data_end, kGuardByte, zone_end - data_end);
  }
}

std::string red_zone_violations(const unsigned char* region, const std::vector<RedZone>& zones,
                                const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < zones.size(); ++i) {
    const RedZone& z = zones[i];
    // Before the tensor: count changed bytes and the one farthest from its start.
    uint64_t before = 0, farthest_before = 0;
    for (uint64_t at = z.zone_offset; at < z.data_offset; ++at) {
      if (region[at] == kGuardByte) continue;
      if (before++ == 0) farthest_before = z.data_offset - at;
    }
    uint64_t after = 0, farthest_after = 0;
    const uint64_t data_end = z.data_offset + z.data_bytes, zone_end = z.zone_offset + z.zone_bytes;
    for (uint64_t at = data_end; at < zone_end; ++at) {
      if (region[at] == kGuardByte) continue;
      ++after;
      farthest_after = at - data_end + 1;
    }
    const std::string name = i < names.size() ? names[i] : fmt::format("argument {}", i);
    if (after > 0) {
      text += fmt::format("{}wrote {} byte{} past the end of {} (up to byte {} after it)", text.empty() ? "" : "; ",
                          after, after == 1 ? "" : "s", name, farthest_after);
    }
    if (before > 0) {
      text += fmt::format("{}wrote {} byte{} before the start of {} (from byte {} before it)",
                          text.empty() ? "" : "; ", before, before == 1 ? "" : "s", name, farthest_before);
    }
  }
  return text;
}

}  // namespace dragon::harness
