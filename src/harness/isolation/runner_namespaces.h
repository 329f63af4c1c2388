// Starting the runner in user, PID and mount namespaces of its own, with a fresh /proc:
// the runner and the kernel in it see no process but themselves, so neither another
// process's command line, environment, memory nor open files (where a seed given on a
// command line, or any other secret, could be). The namespace's first process is a copy
// of the harness that wipes its copy of the command line and environment, starts the
// runner, waits for it and reports how it ended on a status pipe, then exits, which ends
// everything left in the namespace. It holds every capability of the namespace, which
// keeps the runner (which has none) out of its memory. Where the machine
// refuses any step (no unprivileged user namespaces, a /proc that may not be mounted
// again), namespace_support() says which and why, and the caller starts the runner
// without them. Private to isolation.
#pragma once

#include <sys/types.h>

#include <string>

#include "runner_exec.h"

namespace dragon::harness::isolation {

struct NamespaceSupport {
  bool available = false;
  std::string description;  // "own user, PID and mount namespaces with a fresh /proc", or why not
};

// Whether this process can start runners in namespaces of their own: probed once, by
// trying every step in a child that then exits.
const NamespaceSupport& namespace_support();

// Clones the namespace's first process, which starts the runner with `plan` and writes
// the runner's wait status (an int) to `status_fd` when it ends. Returns the first
// process's pid (or -1 with errno, nothing started). A failing step is reported on the
// plan's error pipe as exec_runner's are.
pid_t start_in_namespaces(const ExecPlan& plan, int status_fd);

}  // namespace dragon::harness::isolation
