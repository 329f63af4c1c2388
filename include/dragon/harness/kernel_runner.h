// The child side of isolation: what dragon-kernel-runner does with the job it is sent
// (kernel_runner_protocol.h). It runs in a process of its own that sees only the current
// run's tensors; the parent side is isolated_candidate.h.
#pragma once

namespace dragon::harness::kernel_runner {

// Reads one job from kControlFd, carries it out and writes the reply (the success
// handshake) only after the kernel returned and, for CUDA, the device synchronised and
// every tensor was copied back. Returns the process's exit status: 0 after success, 1
// when the kernel failed, 2 when the runner was not started by the harness.
int runner_main(int argc, char** argv);

}  // namespace dragon::harness::kernel_runner
