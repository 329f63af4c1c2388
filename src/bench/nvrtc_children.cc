// Persistent NVRTC children (nvrtc_children.h). A request is one program's CUDA source; a
// reply is the child's CPU time for it, then 1, the CUBIN, NVRTC's log and whether it came
// from the compile cache, or 0 and NVRTC's failure as it was (api, message, log, where).
#include "dragon/bench/nvrtc_children.h"

#include <poll.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/search/byte_codec.h"
#include "dragon/search/thread_cpu_time.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

using Clock = std::chrono::steady_clock;
using search::ByteReader;
using search::ByteWriter;
using search::WorkerReply;

// A child's reply: the CPU time it spent (counted in `work`), then the CUBIN or why not.
Expected<runtime::Cubin> cubin_of(const WorkerReply& reply, NvrtcChildren::Work& work) {
  if (!reply.ok()) return DRAGON_RUNTIME_FAILURE("NVRTC child", reply.error, "");
  ByteReader in(reply.bytes);
  work.cpu_seconds += in.f64();
  ++work.programs;
  if (in.u64() == 1) {
    runtime::Cubin cubin;
    cubin.bytes = std::string(in.bytes());
    cubin.log = std::string(in.bytes());
    cubin.from_cache = in.u64() != 0;
    return cubin;
  }
  RuntimeFailure failure;
  failure.api = std::string(in.bytes());
  failure.message = std::string(in.bytes());
  failure.log = std::string(in.bytes());
  failure.where = std::string(in.bytes());
  return failure;
}

}  // namespace

NvrtcChildren::NvrtcChildren(size_t count, lower::Target target, std::chrono::milliseconds timeout)
    : target_(std::move(target)), timeout_(timeout) {
  for (size_t c = 0; c < std::max<size_t>(1, count); ++c) children_.push_back(start_child());
}

NvrtcChildren::~NvrtcChildren() {
  // The last child forked holds copies of the earlier children's pipes, so the children end
  // newest first: each then sees its request pipe close at once.
  while (!children_.empty()) children_.pop_back();
}

std::unique_ptr<search::WorkerProcess> NvrtcChildren::start_child() const {
  runtime::NvrtcOptions options;
  if (!target_.arch.empty()) options.arch = target_.arch;
  return std::make_unique<search::WorkerProcess>([options](const std::string& code) {
    // The whole child's CPU time: it compiles one program at a time.
    const double cpu_start = search::process_cpu_seconds();
    std::vector<Expected<runtime::Cubin>> cubins =
        runtime::nvrtc_compile_all({code}, options, runtime::CompileCache::global(), 1);
    ByteWriter out;
    out.f64(search::process_cpu_seconds() - cpu_start);
    if (cubins.front()) {
      const runtime::Cubin& cubin = cubins.front().value();
      out.u64(1);
      out.bytes(cubin.bytes);
      out.bytes(cubin.log);
      out.u64(cubin.from_cache ? 1 : 0);
    } else {
      const RuntimeFailure& failure = cubins.front().error();
      out.u64(0);
      for (const std::string* field : {&failure.api, &failure.message, &failure.log, &failure.where}) out.bytes(*field);
    }
    return out.take();
  });
}

void NvrtcChildren::build(const std::vector<ir::PrimFunc>& flats,
                          const std::vector<runtime::CudaProgramBatch::Range>& ranges, const TakeBuild& take) {
  runtime::CudaProgramBatch batch(flats, target_, ranges);
  struct Busy {
    size_t program = 0;
    Clock::time_point deadline;
  };
  std::vector<std::optional<Busy>> busy(children_.size());
  // However this ends (`take` may throw), a child still compiling must not answer the next
  // build's request with this one's program: it is ended, to be replaced when next needed.
  struct EndBusyChildren {
    std::vector<std::optional<Busy>>& busy;
    std::vector<std::unique_ptr<search::WorkerProcess>>& children;
    ~EndBusyChildren() {
      for (size_t c = 0; c < busy.size(); ++c) {
        if (busy[c]) children[c].reset();
      }
    }
  } end_busy_children{busy, children_};
  std::deque<std::pair<size_t, Expected<runtime::CudaBuild>>> ready;  // built, not yet taken
  size_t next = 0;      // the next program to send
  size_t finished = 0;  // programs back (or failed)
  std::string no_child;  // why no child could be started, when none could
  auto finish = [&](size_t program, Expected<runtime::Cubin> cubin) {
    for (auto& b : batch.finish(program, std::move(cubin))) ready.push_back(std::move(b));
    ++finished;
  };
  // A child that ended (crashed, timed out, killed from outside) is replaced. Forking here
  // is as safe as forking the pool: this loop runs no thread of its own.
  auto ensure_child = [&](size_t c) {
    if (children_[c] && children_[c]->alive()) return true;
    try {
      children_[c] = start_child();
      ++restarts_;
      return true;
    } catch (const Error& e) {
      children_[c].reset();
      no_child = e.what();
      return false;
    }
  };

  while (finished < batch.size() || !ready.empty()) {
    // Every idle child gets the next program; printing it may add programs.
    for (size_t c = 0; c < children_.size() && next < batch.size(); ++c) {
      if (busy[c] || !ensure_child(c)) continue;
      std::string code;
      try {
        code = batch.code(next);
      } catch (const Error& e) {  // code generation refused it: a failure, not a lost round
        finish(next++, DRAGON_RUNTIME_FAILURE("generate_cuda", e.what(), ""));
        continue;
      }
      std::optional<WorkerReply> failed = children_[c]->send(code);
      if (failed && ensure_child(c)) failed = children_[c]->send(code);  // it had died idle: once more
      if (failed) {
        finish(next++, cubin_of(*failed, work_));
        continue;
      }
      busy[c] = Busy{next++, Clock::now() + timeout_};
    }
    const bool any_busy = std::any_of(busy.begin(), busy.end(), [](const auto& b) { return b.has_value(); });
    if (!any_busy && ready.empty() && next < batch.size()) {
      // No child could be started: the rest fail, saying why.
      while (next < batch.size()) {
        finish(next++, DRAGON_RUNTIME_FAILURE("fork", "no NVRTC child could be started: " + no_child, ""));
      }
      continue;
    }
    if (any_busy) {
      // Wait for a reply, not at all while builds wait to be taken.
      std::vector<pollfd> fds;
      std::vector<size_t> owners;
      Clock::time_point first_deadline = Clock::time_point::max();
      for (size_t c = 0; c < busy.size(); ++c) {
        if (!busy[c]) continue;
        fds.push_back({children_[c]->reply_fd(), POLLIN, 0});
        owners.push_back(c);
        first_deadline = std::min(first_deadline, busy[c]->deadline);
      }
      int wait_ms = 0;
      if (ready.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(first_deadline - Clock::now()).count();
        wait_ms = static_cast<int>(std::clamp<int64_t>(left + 1, 0, 1 << 30));
      }
      if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
        throw RuntimeError(DRAGON_RUNTIME_FAILURE("poll", "waiting for the NVRTC children", ""));
      }
      const Clock::time_point now = Clock::now();
      for (size_t k = 0; k < fds.size(); ++k) {
        const size_t c = owners[k];
        const bool answered = (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
        if (!answered && now < busy[c]->deadline) continue;
        // A reply that has begun arrives whole within the deadline; past it, the child is killed.
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(busy[c]->deadline - now);
        WorkerReply reply = children_[c]->receive(std::max(left, std::chrono::milliseconds(0)));
        if (reply.status == WorkerReply::Status::kTimedOut) {
          reply.error = fmt::format("no reply within {} ms; the child was killed", timeout_.count());
        }
        const size_t program = busy[c]->program;
        busy[c].reset();
        finish(program, cubin_of(reply, work_));
      }
    }
    if (!ready.empty()) {
      auto [index, build] = std::move(ready.front());
      ready.pop_front();
      unfinished_ = batch.size() - finished;
      take(index, std::move(build));
    }
  }
  unfinished_ = 0;
  kernels_defined_ += batch.kernels_defined();
  kernels_launched_ += batch.kernels_launched();
}

}  // namespace dragon::bench
