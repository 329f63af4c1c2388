// The forked worker (worker_process.h). Frames on both pipes: one byte of kind (requests:
// 0; replies: 0 ok, 1 the serving function threw), eight bytes of length (host order: both
// ends are one program on one machine), then the bytes.
#include "dragon/search/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>

#include <fmt/format.h>

#include "dragon/support/expected.h"

namespace dragon::search {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& api, const std::string& what) {
  throw RuntimeError(DRAGON_RUNTIME_FAILURE(api, what + ": " + std::strerror(errno), ""));
}

// Writes everything; false when the other end is gone.
bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_frame(int fd, uint8_t kind, const std::string& bytes) {
  uint64_t size = bytes.size();
  return write_all(fd, &kind, 1) && write_all(fd, &size, sizeof(size)) && write_all(fd, bytes.data(), bytes.size());
}

enum class ReadEnd { kDone, kClosed, kTimedOut };

// Reads exactly `size` bytes before `deadline` (none: wait forever).
ReadEnd read_all(int fd, void* data, size_t size, std::optional<Clock::time_point> deadline) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return ReadEnd::kTimedOut;
      pollfd pfd{fd, POLLIN, 0};
      int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return ReadEnd::kTimedOut;
    }
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadEnd::kClosed;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return ReadEnd::kDone;
}

ReadEnd read_frame(int fd, uint8_t& kind, std::string& bytes, std::optional<Clock::time_point> deadline) {
  uint64_t size = 0;
  if (ReadEnd e = read_all(fd, &kind, 1, deadline); e != ReadEnd::kDone) return e;
  if (ReadEnd e = read_all(fd, &size, sizeof(size), deadline); e != ReadEnd::kDone) return e;
  bytes.resize(size);
  return read_all(fd, bytes.data(), size, deadline);
}

[[noreturn]] void serve_forever(int in, int out, const WorkerProcess::Serve& serve) {
  for (;;) {
    uint8_t kind = 0;
    std::string request;
    if (read_frame(in, kind, request, std::nullopt) != ReadEnd::kDone) ::_exit(0);  // the parent is done
    std::string reply;
    uint8_t reply_kind = 0;
    try {
      reply = serve(request);
    } catch (const std::exception& e) {
      reply_kind = 1;
      reply = e.what();
    } catch (...) {
      reply_kind = 1;
      reply = "an exception that is not a std::exception";
    }
    if (!write_frame(out, reply_kind, reply)) ::_exit(0);
  }
}

}  // namespace

WorkerProcess::WorkerProcess(Serve serve) {
  int down[2], up[2];
  if (::pipe2(down, O_CLOEXEC) != 0) fail("pipe2", "the worker's request pipe");
  if (::pipe2(up, O_CLOEXEC) != 0) {
    ::close(down[0]);
    ::close(down[1]);
    fail("pipe2", "the worker's reply pipe");
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
    fail("fork", "starting a worker");
  }
  if (pid == 0) {
    // The child: dies with its parent, reads requests on down[0], replies on up[1]. A
    // write to a parent that went away must end the child quietly, not by SIGPIPE.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    ::signal(SIGPIPE, SIG_IGN);
    ::close(down[1]);
    ::close(up[0]);
    serve_forever(down[0], up[1], serve);
  }
  ::close(down[0]);
  ::close(up[1]);
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
}

WorkerProcess::~WorkerProcess() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  // Closing the request pipe ends a serving child; one stuck in a kernel is killed.
  if (pid_ > 0) {
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
      ::usleep(1000);
    }
    reap(true);
  }
}

std::string WorkerProcess::reap(bool kill_first) {
  if (pid_ <= 0) return "the worker had already ended";
  if (kill_first) ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  pid_ = -1;
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (got < 0) return "the worker could not be waited for";
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

WorkerReply WorkerProcess::call(const std::string& request, std::chrono::milliseconds timeout) {
  if (std::optional<WorkerReply> failed = send(request)) return std::move(*failed);
  return receive(timeout);
}

std::optional<WorkerReply> WorkerProcess::send(const std::string& request) {
  WorkerReply reply;
  if (pid_ <= 0) {
    reply.status = WorkerReply::Status::kCrashed;
    reply.error = "the worker is not running (it ended on an earlier request)";
    return reply;
  }
  if (!write_frame(to_child_, 0, request)) {
    reply.status = WorkerReply::Status::kCrashed;
    reply.error = "the worker died: " + reap(false);
    return reply;
  }
  return std::nullopt;
}

WorkerReply WorkerProcess::receive(std::chrono::milliseconds timeout) {
  WorkerReply reply;
  if (pid_ <= 0) {
    reply.status = WorkerReply::Status::kCrashed;
    reply.error = "the worker is not running (it ended on an earlier request)";
    return reply;
  }
  uint8_t kind = 0;
  switch (read_frame(from_child_, kind, reply.bytes, Clock::now() + timeout)) {
    case ReadEnd::kDone:
      if (kind != 0) {
        reply.status = WorkerReply::Status::kFailed;
        reply.error = std::move(reply.bytes);
        reply.bytes.clear();
      }
      return reply;
    case ReadEnd::kClosed:
      reply.status = WorkerReply::Status::kCrashed;
      reply.error = "the worker died: " + reap(false);
      return reply;
    case ReadEnd::kTimedOut:
      reap(true);
      reply.status = WorkerReply::Status::kTimedOut;
      reply.error = fmt::format("no reply within {} ms; the worker was killed", timeout.count());
      return reply;
  }
  return reply;
}

}  // namespace dragon::search
