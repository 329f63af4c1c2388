// How one runner child's end becomes a RunOutcome: the deadline, a signal, the reply and
// its nonce, the exit status, with the child's captured output attached to the reason.
#pragma once

#include <chrono>
#include <cstdint>

#include "child_process.h"
#include "dragon/harness/candidate.h"

namespace dragon::harness::isolation {

// kOk needs all of: no timeout, no signal, a well-formed reply carrying `nonce` that says
// success, and exit status 0.
RunOutcome judge_child(const ChildRun& run, uint64_t nonce, std::chrono::milliseconds timeout);

// "SIGSEGV (Segmentation fault)".
std::string describe_signal(int signal);

}  // namespace dragon::harness::isolation
