// Where this process's command line and environment lie in its own memory: what
// /proc/PID/cmdline and /proc/PID/environ read (fields 48-51 of /proc/self/stat). Private
// to isolation: hiding a secret there (command_line_secret.h) and wiping both in the
// runner namespaces' first process (runner_namespaces.cc), a copy of the harness whose
// command line the runner could otherwise read.
#pragma once

#include <cstdint>

namespace dragon::harness::isolation {

struct ArgumentMemory {
  uintptr_t arg_start = 0, arg_end = 0;  // all zero when unknown (not Linux)
  uintptr_t env_start = 0, env_end = 0;
};
ArgumentMemory argument_memory();

}  // namespace dragon::harness::isolation
