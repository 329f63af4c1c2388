// The last steps of starting dragon-kernel-runner, in a forked (or cloned) child: only
// async-signal-safe calls between fork and execve (the parent may have other threads).
// Shared by the plain start (child_process.cc) and the start in namespaces of its own
// (runner_namespaces.cc). A step that fails is reported on the error pipe as two ints:
// the step (StartStep) and errno.
#pragma once

#include <string_view>

namespace dragon::harness::isolation {

enum class StartStep : int {
  kExec = 1,
  kSetgroups = 2,     // writing "deny" to /proc/self/setgroups
  kUidMap = 3,
  kGidMap = 4,
  kPrivateMounts = 5, // making the mount namespace's mounts private
  kMountProc = 6,     // a fresh /proc for the PID namespace
  kFork = 7,          // the namespace's first process starting the runner
};
std::string_view start_step_name(StartStep step);  // "execve", "writing uid_map", ...

// Everything the child needs, prepared before fork.
struct ExecPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int control = -1, arguments = -1, output = -1, dev_null = -1;
  int error_pipe = -1;  // the write end; closed on exec
  int max_fd = 1024;
};

// Writes {step, error} to `fd` (async-signal-safe).
void report_start_failure(int fd, StartStep step, int error);

// Resets signals, drops core dumps, moves the descriptors into place (0: /dev/null, 1 and
// 2: the output pipe, 3: control, 4: arguments; everything else closed at exec) and
// execs the runner; `own_group` makes the child a process group of its own first. On
// failure reports kExec on the error pipe and _exits 127.
[[noreturn]] void exec_runner(const ExecPlan& plan, bool own_group);

}  // namespace dragon::harness::isolation
