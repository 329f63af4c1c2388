// One GPU activity recorded by the profiling injection library (a kernel, a copy, a
// memset) or an NVTX range, as read back from its trace files. Plain data.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dragon::profile {

enum class EventKind : uint8_t { kKernel, kMemcpy, kMemset, kRange };

struct TraceEvent {
  EventKind kind = EventKind::kKernel;
  std::string name;     // kernels: mangled as recorded; copies: "Memcpy HtoD"; ranges: the NVTX message
  uint64_t start_ns = 0;  // CUPTI timestamps (one clock for all processes of a run)
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  int64_t pid = 0;
  uint64_t bytes = 0;                  // copies and memsets
  std::array<int32_t, 3> grid{};       // kernels
  std::array<int32_t, 3> block{};      // kernels
  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

// What one process's trace file says about itself.
struct ProcessTrace {
  int64_t pid = 0;
  std::string command;          // argv[0] of the process, when known
  uint64_t window_start_ns = 0;  // injection start (CUPTI clock)
  uint64_t window_end_ns = 0;    // flush at exit; 0 when the process did not exit cleanly
  uint64_t dropped_records = 0;  // records CUPTI reported as dropped
  bool complete = false;         // the end line was written
  std::string error;             // e.g. another CUPTI subscriber held the activity API
  std::vector<TraceEvent> events;
};

}  // namespace dragon::profile
