// One run of dragon-kernel-runner as a child process: a fresh process group (or
// namespaces of its own), a control socket, the argument region, an environment of our
// choosing, captured output, and a hard deadline. Says how the child ended; judging that
// is isolated_candidate.cc's job.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dragon/support/expected.h"

namespace dragon::harness::isolation {

struct ChildRequest {
  std::string runner_path;
  std::string job;                       // written to the control socket, then its write side is shut
  int arguments_fd = -1;                 // the region's memfd, or -1 for none
  std::vector<std::string> environment;  // the child's whole environment, "NAME=value"
  std::chrono::milliseconds timeout{10000};
  size_t output_limit = 4096;  // bytes of stdout + stderr kept (the last ones)
  // Marks this process non-dumpable first, so that a child without capabilities (the
  // runner drops them) cannot read our memory through /proc/PID/mem or ptrace even under
  // the same user. Side effects on this process: no core dumps, no debugger attach
  // without privileges.
  bool hide_parent_memory = true;
  // Start the runner in user, PID and mount namespaces of its own with a fresh /proc
  // (runner_namespaces.h); only where namespace_support() says they are available.
  bool own_namespaces = false;
};

struct ChildRun {
  bool timed_out = false;  // killed at the deadline
  bool exited = false;     // exited by itself; exit_code is valid
  int exit_code = -1;
  int signal = 0;             // the signal that ended it, when it did not exit
  std::string reply;          // everything it wrote on the control socket
  std::string output;         // the last output_limit bytes it printed
  uint64_t output_bytes = 0;  // everything it printed
  double seconds = 0;
};

// Runs the child to its end (or the deadline: the whole process group is killed). A
// failure is the harness's own: the runner could not be started.
Expected<ChildRun> run_child(const ChildRequest& request);

}  // namespace dragon::harness::isolation
