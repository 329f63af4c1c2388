// The forked worker: replies, exceptions as kFailed with the worker alive, a crash as
// kCrashed naming the signal, a hang as kTimedOut within its timeout; the parent goes on.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "dragon/search/worker_process.h"

namespace dragon::search {
namespace {

using namespace std::chrono_literals;

std::string serve(const std::string& request) {
  if (request == "crash") ::raise(SIGSEGV);
  if (request == "hang") {
    for (;;) ::pause();
  }
  if (request == "throw") throw std::runtime_error("asked to throw");
  if (request == "exit") ::_exit(7);
  return "echo " + request;
}

TEST(WorkerProcess, RepliesToRequests) {
  WorkerProcess worker(serve);
  WorkerReply r = worker.call("one", 5s);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.bytes, "echo one");
  std::string big(3 << 20, 'x');  // beyond a pipe's buffer both ways
  r = worker.call(big, 5s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.bytes.size(), big.size() + 5);
}

TEST(WorkerProcess, SendAndReceiveAreACallInTwoHalves) {
  WorkerProcess first(serve), second(serve);
  // Both children have their requests before the parent waits for either.
  EXPECT_FALSE(first.send("a").has_value());
  EXPECT_FALSE(second.send(std::string(1 << 20, 'b')).has_value());
  WorkerReply b = second.receive(5s);
  WorkerReply a = first.receive(5s);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error << b.error;
  EXPECT_EQ(a.bytes, "echo a");
  EXPECT_EQ(b.bytes.size(), (1u << 20) + 5);
  // A child that ended answers the next send with the failure.
  EXPECT_EQ(first.call("crash", 5s).status, WorkerReply::Status::kCrashed);
  std::optional<WorkerReply> gone = first.send("more");
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->status, WorkerReply::Status::kCrashed);
  EXPECT_EQ(first.receive(1s).status, WorkerReply::Status::kCrashed);
}

TEST(WorkerProcess, AnExceptionIsAFailureAndTheWorkerLivesOn) {
  WorkerProcess worker(serve);
  WorkerReply r = worker.call("throw", 5s);
  EXPECT_EQ(r.status, WorkerReply::Status::kFailed);
  EXPECT_EQ(r.error, "asked to throw");
  EXPECT_TRUE(worker.alive());
  EXPECT_TRUE(worker.call("again", 5s).ok());
}

TEST(WorkerProcess, ACrashEndsOnlyTheWorker) {
  WorkerProcess worker(serve);
  WorkerReply r = worker.call("crash", 5s);
  EXPECT_EQ(r.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(r.error.find("signal 11"), std::string::npos) << r.error;
  EXPECT_FALSE(worker.alive());
  EXPECT_EQ(worker.call("more", 5s).status, WorkerReply::Status::kCrashed);
  WorkerProcess fresh(serve);
  EXPECT_TRUE(fresh.call("after", 5s).ok());
}

TEST(WorkerProcess, AnExitIsACrashWithItsStatus) {
  WorkerProcess worker(serve);
  WorkerReply r = worker.call("exit", 5s);
  EXPECT_EQ(r.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(r.error.find("status 7"), std::string::npos) << r.error;
}

TEST(WorkerProcess, AHangTimesOutAndTheWorkerIsKilled) {
  WorkerProcess worker(serve);
  auto start = std::chrono::steady_clock::now();
  WorkerReply r = worker.call("hang", 300ms);
  EXPECT_EQ(r.status, WorkerReply::Status::kTimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_FALSE(worker.alive());
}

}  // namespace
}  // namespace dragon::search
