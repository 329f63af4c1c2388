// A forked child process that serves requests for its parent, for work that may crash or
// hang (running generated kernels): a crash or a hang ends the child, never the parent,
// and the parent is told which. Requests and replies are byte strings over two pipes.
// The child is a fork, not a new program: it starts with the parent's memory as it was
// (the serving function and what it captured), so it must be started while the parent has
// no other thread running and before the parent initialises a GPU driver or OpenMP.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace dragon::search {

struct WorkerReply {
  enum class Status {
    kOk,        // the reply
    kFailed,    // the serving function threw: `error` holds its message (the child lives on)
    kCrashed,   // the child died: `error` says how (a signal, an exit status)
    kTimedOut,  // no reply within the timeout: the child was killed
  };
  Status status = Status::kOk;
  std::string bytes;
  std::string error;
  bool ok() const { return status == Status::kOk; }
};

class WorkerProcess {
 public:
  // Runs in the child, once per request; what it returns is the reply. An exception is
  // sent back as kFailed.
  using Serve = std::function<std::string(const std::string& request)>;

  // Forks the child. Throws RuntimeError when fork or pipe fail.
  explicit WorkerProcess(Serve serve);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` and waits for the reply. After kCrashed or kTimedOut the child is gone
  // and every later call fails the same way: start a new WorkerProcess.
  WorkerReply call(const std::string& request, std::chrono::milliseconds timeout);
  // call() in two halves, so the parent can work while the child does: send() gives the
  // child its request (a failure reply when the child is gone), receive() waits for the
  // reply, its timeout counted from there. One request at a time.
  std::optional<WorkerReply> send(const std::string& request);
  WorkerReply receive(std::chrono::milliseconds timeout);
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // The end of the reply pipe, for a parent that polls several workers (-1 when none runs).
  int reply_fd() const { return from_child_; }

 private:
  // Reaps the child (killing it first when `kill_first`) and says how it ended.
  std::string reap(bool kill_first);
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
};

}  // namespace dragon::search
