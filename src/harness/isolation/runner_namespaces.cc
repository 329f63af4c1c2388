// The namespaces' first process and the probe (runner_namespaces.h). Between clone and
// execve only async-signal-safe calls: raw system calls, no allocation, no locks.
#include "runner_namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "process_arguments.h"

namespace dragon::harness::isolation {
namespace {

constexpr unsigned long kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS;

// The lines written to the child's own maps: its user and group IDs, mapped to themselves.
struct IdMaps {
  char uid_map[48];
  char gid_map[48];
};

IdMaps id_maps() {
  IdMaps maps{};
  std::snprintf(maps.uid_map, sizeof maps.uid_map, "%u %u 1\n", static_cast<unsigned>(::geteuid()),
                static_cast<unsigned>(::geteuid()));
  std::snprintf(maps.gid_map, sizeof maps.gid_map, "%u %u 1\n", static_cast<unsigned>(::getegid()),
                static_cast<unsigned>(::getegid()));
  return maps;
}

// A fork through the system call: no atfork handlers and no locks of the C library taken
// in a child whose parent may have other threads.
pid_t raw_clone(unsigned long flags) {
  return static_cast<pid_t>(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

bool write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t length = std::strlen(text);
  bool ok = ::write(fd, text, length) == static_cast<ssize_t>(length);
  ::close(fd);
  return ok;
}

// The steps every process in the namespaces depends on, in the first process. Returns the
// step that failed (errno set), or 0.
int enter(const IdMaps& maps) {
  // Kernels before 3.19 have no setgroups file, and need none.
  if (!write_file("/proc/self/setgroups", "deny") && errno != ENOENT) return static_cast<int>(StartStep::kSetgroups);
  if (!write_file("/proc/self/uid_map", maps.uid_map)) return static_cast<int>(StartStep::kUidMap);
  if (!write_file("/proc/self/gid_map", maps.gid_map)) return static_cast<int>(StartStep::kGidMap);
  // Nothing mounted here reaches the parent's mount namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return static_cast<int>(StartStep::kPrivateMounts);
  }
  // A /proc of this PID namespace: it lists only the namespace's processes.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return static_cast<int>(StartStep::kMountProc);
  }
  return 0;
}

void close_all_but(int keep, int max_fd) {
  if (keep > 0 && ::syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u) != 0) {
    for (int fd = 0; fd < keep; ++fd) ::close(fd);
  }
  if (::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0u) != 0) {
    for (int fd = keep + 1; fd < max_fd; ++fd) ::close(fd);
  }
}

[[noreturn]] void first_process(const ExecPlan& plan, const IdMaps& maps, const ArgumentMemory& memory,
                                int status_fd) {
  ::setpgid(0, 0);
  // This process is a copy of the harness, and its command line and environment are what
  // /proc/1/cmdline and environ show the runner: gone, whatever the harness was started with.
  if (memory.arg_end > memory.arg_start) {
    std::memset(reinterpret_cast<void*>(memory.arg_start), 0, memory.arg_end - memory.arg_start);
  }
  if (memory.env_end > memory.env_start) {
    std::memset(reinterpret_cast<void*>(memory.env_start), 0, memory.env_end - memory.env_start);
  }
  // It ends with the harness (which waits for it, so only a dying harness ends it early).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // The harness's handlers are code of the harness: none may run here.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  if (int step = enter(maps); step != 0) {
    report_start_failure(plan.error_pipe, static_cast<StartStep>(step), errno);
    ::_exit(127);
  }
  pid_t runner = raw_clone(0);
  if (runner == 0) exec_runner(plan, /*own_group=*/false);
  if (runner < 0) {
    report_start_failure(plan.error_pipe, StartStep::kFork, errno);
    ::_exit(127);
  }
  close_all_but(status_fd, plan.max_fd);
  int status = 0;
  for (;;) {
    pid_t ended = ::waitpid(-1, &status, 0);  // also reaps what the runner left behind
    if (ended == runner) break;
    if (ended < 0 && errno != EINTR) {
      status = -1;
      break;
    }
  }
  ssize_t ignored = ::write(status_fd, &status, sizeof status);
  (void)ignored;
  ::_exit(0);
}

NamespaceSupport probe() {
  NamespaceSupport support;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    support.description = std::string("no namespaces (pipe2: ") + std::strerror(errno) + ")";
    return support;
  }
  const IdMaps maps = id_maps();
  pid_t pid = raw_clone(kNamespaceFlags);
  if (pid == 0) {
    if (int step = enter(maps); step != 0) {
      report_start_failure(pipe_fds[1], static_cast<StartStep>(step), errno);
      ::_exit(1);
    }
    ::_exit(0);
  }
  const int clone_errno = errno;
  ::close(pipe_fds[1]);
  int report[2] = {0, 0};
  ssize_t got = 0;
  if (pid > 0) {
    do {
      got = ::read(pipe_fds[0], report, sizeof report);
    } while (got < 0 && errno == EINTR);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  ::close(pipe_fds[0]);
  if (pid < 0) {
    support.description = std::string("no namespaces on this machine (clone with new user, PID and mount "
                                      "namespaces: ") +
                          std::strerror(clone_errno) + ")";
  } else if (got == static_cast<ssize_t>(sizeof report)) {
    support.description = std::string("no namespaces on this machine (") +
                          std::string(start_step_name(static_cast<StartStep>(report[0]))) + ": " +
                          std::strerror(report[1]) + ")";
  } else {
    support.available = true;
    support.description = "own user, PID and mount namespaces with a fresh /proc";
  }
  return support;
}

}  // namespace

const NamespaceSupport& namespace_support() {
  static const NamespaceSupport support = probe();
  return support;
}

pid_t start_in_namespaces(const ExecPlan& plan, int status_fd) {
  // Before the clone: snprintf and file reads are not for the child.
  const IdMaps maps = id_maps();
  static const ArgumentMemory memory = argument_memory();
  pid_t pid = raw_clone(kNamespaceFlags);
  if (pid == 0) first_process(plan, maps, memory, status_fd);
  return pid;
}

}  // namespace dragon::harness::isolation
