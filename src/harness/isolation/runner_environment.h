// What the runner child inherits from us: its environment, chosen variable by variable.
// This file and runner_environment.cc are the only places isolation reads the environment.
#pragma once

#include <string>
#include <vector>

#include "dragon/harness/kernel_runner_protocol.h"

namespace dragon::harness::isolation {

// "NAME=value" for each variable the job needs and this process has: the dynamic
// loader's path and the CUDA device selection for runs; PATH and TMPDIR for the compiler.
std::vector<std::string> runner_environment(kernel_runner::JobKind kind);

}  // namespace dragon::harness::isolation
