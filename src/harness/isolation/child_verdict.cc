// judge_child (child_verdict.h).
#include "child_verdict.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>

#include "dragon/harness/kernel_runner_protocol.h"

namespace dragon::harness::isolation {
namespace {

std::string with_output(std::string reason, const ChildRun& run) {
  if (run.output_bytes == 0) return reason;
  if (run.output_bytes > run.output.size()) {
    reason += fmt::format("\n--- output of the kernel's process (last {} of {} bytes) ---\n", run.output.size(),
                          run.output_bytes);
  } else {
    reason += "\n--- output of the kernel's process ---\n";
  }
  reason += run.output;
  return reason;
}

RunOutcome fail(RunStatus status, std::string reason, const ChildRun& run) {
  return RunOutcome::failure(status, with_output(std::move(reason), run));
}

}  // namespace

std::string describe_signal(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  const char* description = ::sigdescr_np(signal);
  std::string name = abbreviation != nullptr ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
  if (description != nullptr) name += std::string(" (") + description + ")";
  return name;
}

RunOutcome judge_child(const ChildRun& run, uint64_t nonce, std::chrono::milliseconds timeout) {
  if (run.timed_out) {
    return fail(RunStatus::kTimedOut,
                fmt::format("did not finish within {:.3g} s; its process group was killed", timeout.count() / 1000.0),
                run);
  }
  std::optional<kernel_runner::Reply> reply = kernel_runner::decode_reply(run.reply);
  std::string reply_problem;
  if (reply && reply->nonce != nonce) {
    reply_problem = " (a reply with the wrong nonce came: not from this run's runner)";
    reply.reset();
  } else if (!reply && !run.reply.empty()) {
    reply_problem = fmt::format(" ({} bytes that are not a reply came on the control socket)", run.reply.size());
  }
  if (!run.exited) {
    std::string reason = "killed by " + describe_signal(run.signal);
    if (reply && reply->status != kernel_runner::ReplyStatus::kSuccess) {
      reason += "; it had reported: " + reply->failure.describe();
    }
    return fail(RunStatus::kCrashed, reason, run);
  }
  if (reply && reply->status == kernel_runner::ReplyStatus::kFaulted) {
    return fail(RunStatus::kCrashed, "device fault: " + reply->failure.describe(), run);
  }
  if (reply && reply->status == kernel_runner::ReplyStatus::kFailed) {
    return fail(RunStatus::kFailed, reply->failure.describe(), run);
  }
  if (reply && run.exit_code == 0) return RunOutcome::success();
  if (reply) {
    return fail(RunStatus::kCrashed,
                fmt::format("exited with status {} after its success handshake (in exit handlers)", run.exit_code),
                run);
  }
  if (run.exit_code == 0) {
    return fail(RunStatus::kNoHandshake, "exited with status 0 without the success handshake" + reply_problem, run);
  }
  return fail(RunStatus::kCrashed, fmt::format("exited with status {} without a result", run.exit_code) + reply_problem,
              run);
}

}  // namespace dragon::harness::isolation
