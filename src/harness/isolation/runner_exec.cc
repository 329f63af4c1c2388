// exec_runner and its failure report (runner_exec.h).
#include "runner_exec.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dragon/harness/kernel_runner_protocol.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace dragon::harness::isolation {
namespace {

// Descriptors above every one the child sets up, for the shuffle before dup2.
constexpr int kHighFd = 64;

}  // namespace

std::string_view start_step_name(StartStep step) {
  switch (step) {
    case StartStep::kExec: return "execve";
    case StartStep::kSetgroups: return "writing /proc/self/setgroups";
    case StartStep::kUidMap: return "writing /proc/self/uid_map";
    case StartStep::kGidMap: return "writing /proc/self/gid_map";
    case StartStep::kPrivateMounts: return "making mounts private";
    case StartStep::kMountProc: return "mounting a fresh /proc";
    case StartStep::kFork: return "forking the runner in its namespaces";
  }
  return "starting the runner";
}

void report_start_failure(int fd, StartStep step, int error) {
  if (fd < 0) return;
  const int report[2] = {static_cast<int>(step), error};
  ssize_t ignored = ::write(fd, report, sizeof report);
  (void)ignored;
}

void exec_runner(const ExecPlan& plan, bool own_group) {
  if (own_group) ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Ignored signals stay ignored across exec; the kernel gets default dispositions.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  const rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // crashing candidates are expected; leave no core files
  // Move every descriptor above the targets first so that no dup2 clobbers a source.
  int high_control = ::fcntl(plan.control, F_DUPFD_CLOEXEC, kHighFd);
  int high_arguments = plan.arguments >= 0 ? ::fcntl(plan.arguments, F_DUPFD_CLOEXEC, kHighFd) : -1;
  int high_output = ::fcntl(plan.output, F_DUPFD_CLOEXEC, kHighFd);
  int high_null = ::fcntl(plan.dev_null, F_DUPFD_CLOEXEC, kHighFd);
  int high_error = ::fcntl(plan.error_pipe, F_DUPFD_CLOEXEC, kHighFd);
  bool ok = high_control >= 0 && high_output >= 0 && high_null >= 0 && high_error >= 0 &&
            (plan.arguments < 0 || high_arguments >= 0);
  ok = ok && ::dup2(high_null, 0) == 0 && ::dup2(high_output, 1) == 1 && ::dup2(high_output, 2) == 2 &&
       ::dup2(high_control, kernel_runner::kControlFd) == kernel_runner::kControlFd;
  if (ok && high_arguments >= 0)
    ok = ::dup2(high_arguments, kernel_runner::kArgumentsFd) == kernel_runner::kArgumentsFd;
  // Everything else the parent had open ends at exec (the error pipe, until then, too).
  int first_closed = high_arguments >= 0 ? kernel_runner::kArgumentsFd + 1 : kernel_runner::kArgumentsFd;
  if (ok && ::syscall(SYS_close_range, first_closed, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = first_closed; fd < plan.max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (ok) ::execve(plan.path, plan.argv, plan.envp);
  report_start_failure(high_error >= 0 ? high_error : plan.error_pipe, StartStep::kExec, errno);
  ::_exit(127);
}

}  // namespace dragon::harness::isolation
