// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in seconds: what search reports
// as CPU work per candidate, unaffected by other processes sharing the cores (the figures of
// a loaded 2-core machine would otherwise be wall time spent waiting); and of the whole
// process (an NVRTC child's work on a program, whatever threads NVRTC uses).
#pragma once

#include <time.h>

namespace dragon::search {

inline double cpu_clock_seconds(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

inline double thread_cpu_seconds() { return cpu_clock_seconds(CLOCK_THREAD_CPUTIME_ID); }
inline double process_cpu_seconds() { return cpu_clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

}  // namespace dragon::search
