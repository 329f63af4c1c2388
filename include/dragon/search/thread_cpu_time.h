// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in seconds: what search reports
// as CPU work per candidate, unaffected by other processes sharing the cores (the figures of
// a loaded 2-core machine would otherwise be wall time spent waiting).
#pragma once

#include <time.h>

namespace dragon::search {

inline double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace dragon::search
