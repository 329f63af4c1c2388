// run_child (child_process.h): fork and exec with only async-signal-safe calls in between,
// then one poll loop over the control socket, the output pipe and a pidfd until the child
// is gone or the deadline passes.
#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runner_exec.h"
#include "runner_namespaces.h"

namespace dragon::harness::isolation {
namespace {

// The runner replies with a few bytes; more than this is a kernel writing on the socket.
constexpr size_t kMaxReplyBytes = size_t{1} << 20;
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

RuntimeFailure system_failure(const char* api, const std::string& what) {
  return RuntimeFailure{api, what + ": " + std::strerror(errno), "", "child_process.cc"};
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Keeps the last `limit` bytes of what arrives, counting all of it.
struct OutputTail {
  size_t limit;
  std::string text;
  uint64_t total = 0;
  void append(const char* data, size_t n) {
    total += n;
    text.append(data, n);
    if (text.size() > 2 * limit + 65536) text.erase(0, text.size() - limit);
  }
  std::string finish() {
    if (text.size() > limit) text.erase(0, text.size() - limit);
    return std::move(text);
  }
};

}  // namespace

Expected<ChildRun> run_child(const ChildRequest& request) {
  if (request.hide_parent_memory && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return system_failure("prctl(PR_SET_DUMPABLE)", "hiding the harness's memory from the runner");
  }
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    return system_failure("socketpair", "control socket");
  OwnedFd control(sockets[0]), child_control(sockets[1]);
  int pipes[2];
  if (::pipe2(pipes, O_CLOEXEC) != 0) return system_failure("pipe2", "output pipe");
  OwnedFd output(pipes[0]), child_output(pipes[1]);
  if (::pipe2(pipes, O_CLOEXEC) != 0) return system_failure("pipe2", "exec error pipe");
  OwnedFd exec_error(pipes[0]), child_exec_error(pipes[1]);
  OwnedFd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (dev_null.get() < 0) return system_failure("open", "/dev/null");
  // In namespaces, the runner's wait status comes from the namespace's first process.
  OwnedFd status, child_status;
  if (request.own_namespaces) {
    if (!namespace_support().available) {
      return RuntimeFailure{"run_child", "namespaces were asked for, but " + namespace_support().description,
                                     "", "child_process.cc"};
    }
    if (::pipe2(pipes, O_CLOEXEC) != 0) return system_failure("pipe2", "status pipe");
    status.reset(pipes[0]);
    child_status.reset(pipes[1]);
  }

  // Everything the child touches before exec is prepared here: after fork only
  // async-signal-safe calls are allowed (the parent may have other threads).
  std::vector<char*> argv = {const_cast<char*>(request.runner_path.c_str()), nullptr};
  std::vector<char*> envp;
  for (const std::string& e : request.environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int max_fd = static_cast<int>(std::min<long>(::sysconf(_SC_OPEN_MAX), 65536));

  const ExecPlan plan{request.runner_path.c_str(), argv.data(), envp.data(), child_control.get(),
                      request.arguments_fd,       child_output.get(), dev_null.get(), child_exec_error.get(),
                      max_fd};
  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  if (request.own_namespaces) {
    pid = start_in_namespaces(plan, child_status.get());
    if (pid < 0) return system_failure("clone", "starting " + request.runner_path + " in namespaces");
  } else {
    pid = ::fork();
    if (pid < 0) return system_failure("fork", "starting " + request.runner_path);
    if (pid == 0) exec_runner(plan, /*own_group=*/true);
  }
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  child_control.reset();
  child_output.reset();
  child_exec_error.reset();
  child_status.reset();
  dev_null.reset();

  int report[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::read(exec_error.get(), report, sizeof report);
  } while (got < 0 && errno == EINTR);
  if (got > 0) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return RuntimeFailure{std::string(start_step_name(static_cast<StartStep>(report[0]))),
                                   "cannot start " + request.runner_path + ": " + std::strerror(report[1]), "",
                                   "child_process.cc"};
  }
  OwnedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.get() < 0) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return system_failure("pidfd_open", "watching the runner");
  }
  set_nonblocking(control.get());
  set_nonblocking(output.get());

  ChildRun run;
  OutputTail tail{request.output_limit, {}, 0};
  auto deadline = start + request.timeout;
  size_t sent = 0;
  bool writing = true, control_open = true, output_open = true, exited = false;
  if (request.job.empty()) {
    ::shutdown(control.get(), SHUT_WR);
    writing = false;
  }
  char buffer[1 << 16];
  while (!exited || control_open || output_open) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      if (!exited) {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        run.timed_out = true;
      }
      break;  // an exited child whose descendants escaped its group: stop listening
    }
    auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd fds[3];
    int count = 0;
    int control_at = -1, output_at = -1, pid_at = -1;
    if (control_open || writing) {
      control_at = count;
      fds[count++] = {control.get(), static_cast<short>((control_open ? POLLIN : 0) | (writing ? POLLOUT : 0)), 0};
    }
    if (output_open) {
      output_at = count;
      fds[count++] = {output.get(), POLLIN, 0};
    }
    if (!exited) {
      pid_at = count;
      fds[count++] = {pidfd.get(), POLLIN, 0};
    }
    int ready = ::poll(fds, static_cast<nfds_t>(count), static_cast<int>(std::min<long long>(remaining, 1 << 30)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return system_failure("poll", "watching the runner");
    }
    if (control_at >= 0 && fds[control_at].revents != 0) {
      short revents = fds[control_at].revents;
      if (writing && (revents & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t n =
            ::send(control.get(), request.job.data() + sent, request.job.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) sent += static_cast<size_t>(n);
        if (sent == request.job.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          ::shutdown(control.get(), SHUT_WR);  // the runner reads the job to its end
          writing = false;
        }
      }
      if (control_open && (revents & (POLLIN | POLLERR | POLLHUP))) {
        ssize_t n = ::recv(control.get(), buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
          if (run.reply.size() + static_cast<size_t>(n) <= kMaxReplyBytes)
            run.reply.append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          control_open = false;
          writing = false;
        }
      }
    }
    if (output_at >= 0 && fds[output_at].revents != 0) {
      ssize_t n = ::read(output.get(), buffer, sizeof buffer);
      if (n > 0) {
        tail.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        output_open = false;
      }
    }
    if (pid_at >= 0 && fds[pid_at].revents != 0) {
      // Whatever the kernel left behind in its group dies with it (and lets go of the
      // pipes). Killed before reaping: while unreaped, the pid cannot name anyone else.
      ::kill(-pid, SIGKILL);
      int wait_status = 0;
      if (::waitpid(pid, &wait_status, 0) == pid) {
        exited = true;
        // In namespaces the runner's own status, as its first process reported it.
        int runner_status = 0;
        if (request.own_namespaces) {
          if (::read(status.get(), &runner_status, sizeof runner_status) == sizeof runner_status && runner_status >= 0) {
            wait_status = runner_status;
          } else if (WIFEXITED(wait_status)) {
            wait_status = W_EXITCODE(126, 0);  // no status: the runner never started or could not be waited for
          }
        }
        if (WIFEXITED(wait_status)) {
          run.exited = true;
          run.exit_code = WEXITSTATUS(wait_status);
        } else if (WIFSIGNALED(wait_status)) {
          run.signal = WTERMSIG(wait_status);
        }
      }
    }
  }
  run.output = tail.finish();
  run.output_bytes = tail.total;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace dragon::harness::isolation
