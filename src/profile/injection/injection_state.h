// Internal to libdragon_profile.so: the one trace file a process writes and the lock
// around it, shared by the CUPTI activity side and the NVTX side. Not a public API.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace dragon::profile::injection {

struct State {
  std::mutex mutex;
  FILE* out = nullptr;  // null until open_trace() and after exit
  bool opened = false;   // open_trace() ran (whether or not it succeeded)
  bool cupti_started = false;
  uint64_t dropped = 0;
};

// Opens DRAGON_PROFILE_DIR/trace-<pid>.jsonl and writes the process record, once, for
// whichever side starts first (NVTX may be called before CUDA); false when it cannot.
bool open_trace();

// Never destroyed: CUPTI and NVTX may call back during exit.
State& state();

// Appends a range record {"t":"range",...} (takes the lock).
void write_range(const std::string& name, uint64_t start_ns, uint64_t end_ns);

// Makes NVTX calls of this process reach nvtx_ranges.cc (NVTX reads the variable at its
// first call, which in the programs we profile comes after CUDA starts).
void route_nvtx_here();

}  // namespace dragon::profile::injection
