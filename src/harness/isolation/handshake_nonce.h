// The number a run's success handshake must carry (kernel_runner_protocol.h Job::nonce).
#pragma once

#include <cstdint>

namespace dragon::harness::isolation {

// Unpredictable per run, so that a reply left by anything but this run's runner is no handshake.
uint64_t fresh_handshake_nonce();

}  // namespace dragon::harness::isolation
