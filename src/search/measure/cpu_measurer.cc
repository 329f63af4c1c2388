// The CPU measurer (cpu_measurer.h). Requests to the worker, one byte of op then its
// operands: 'L' path \0 entry (load), 'R' arguments (run once on them, send them back), 'G'
// (send the arguments as the last call left them), 'T' cutoff in ms (time the loaded entry
// on the arguments it holds; a first timed call slower than the cutoff is the only one).
// Arguments travel as a count, then per argument its size and bytes.
#include "dragon/search/cpu_measurer.h"

#include <dlfcn.h>

#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/codegen/cpu_codegen.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/search/best_so_far.h"
#include "dragon/search/thread_cpu_time.h"
#include "dragon/search/worker_process.h"
#include "dragon/support/error.h"
#include "dragon/search/byte_codec.h"

namespace dragon::search {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ---- The worker's side --------------------------------------------------------------------

class KernelHost {
 public:
  explicit KernelHost(CpuTimerOptions timer) : timer_(timer) {}

  std::string serve(const std::string& request) {
    ByteReader in(request);
    char op = in.byte();
    if (op == 'L') return load(in.rest());
    if (op == 'R') {
      read_arguments(in);
      run_once();
      return write_arguments();
    }
    if (op == 'G') return write_arguments();
    if (op == 'T') return time(in.f64());
    throw InternalError(fmt::format("kernel worker: unknown request '{}'", op));
  }

 private:
  std::string load(std::string_view spec) {
    size_t split = spec.find('\0');
    std::string path(spec.substr(0, split)), entry(spec.substr(split + 1));
    if (path != path_) {
      // RTLD_NODELETE as in the runtime: OpenMP threads may still run the module's code.
      handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
      if (handle_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
      path_ = path;
    }
    void* symbol = ::dlsym(handle_, entry.c_str());
    if (symbol == nullptr) throw std::runtime_error("dlsym " + entry + ": not found in " + path);
    entry_ = reinterpret_cast<runtime::CpuEntry>(symbol);
    return "";
  }

  void read_arguments(ByteReader& in) {
    uint64_t count = in.u64();
    buffers_.resize(count);
    pointers_.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view bytes = in.bytes();
      Buffer& b = buffers_[i];
      if (b.size != bytes.size()) {
        b.data.reset(static_cast<unsigned char*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64 + 64)));
        b.size = bytes.size();
      }
      std::memcpy(b.data.get(), bytes.data(), bytes.size());
      pointers_[i] = b.data.get();
    }
  }

  std::string write_arguments() const {
    ByteWriter out;
    out.u64(buffers_.size());
    for (const Buffer& b : buffers_) out.bytes(std::string_view(reinterpret_cast<const char*>(b.data.get()), b.size));
    return out.take();
  }

  void run_once() {
    if (entry_ == nullptr) throw std::runtime_error("no kernel loaded");
    entry_(pointers_.data());
  }

  // Times the loaded entry; a first call slower than `cutoff_ms` (0: none) ends it there.
  std::string time(double cutoff_ms) {
    for (int i = 0; i < timer_.warmup_calls; ++i) run_once();
    harness::GpuTimerOptions rule;
    rule.min_calls = timer_.min_calls;
    rule.target_relative_ci = timer_.target_relative_ci;
    std::vector<double> samples;
    Clock::time_point start = Clock::now();
    while (static_cast<int>(samples.size()) < timer_.max_calls) {
      Clock::time_point t0 = Clock::now();
      run_once();
      samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (cutoff_ms > 0 && samples.size() == 1 && samples[0] > cutoff_ms) break;
      if (static_cast<int>(samples.size()) < timer_.min_calls) continue;
      if (seconds_since(start) > timer_.max_seconds) break;
      if (harness::timing_converged(harness::summarize_samples(samples), rule)) break;
    }
    ByteWriter out;
    out.u64(samples.size());
    for (double s : samples) out.f64(s);
    return out.take();
  }

  struct Buffer {
    struct Free {
      void operator()(unsigned char* p) const { std::free(p); }
    };
    std::unique_ptr<unsigned char, Free> data;
    size_t size = static_cast<size_t>(-1);
  };
  CpuTimerOptions timer_;
  std::string path_;
  void* handle_ = nullptr;
  runtime::CpuEntry entry_ = nullptr;
  std::vector<Buffer> buffers_;
  std::vector<void*> pointers_;
};

// ---- The parent's side ------------------------------------------------------------------

std::string encode_arguments(char op, const std::vector<tensor::HostTensor>& args) {
  ByteWriter out;
  out.byte(op);
  out.u64(args.size());
  for (const tensor::HostTensor& t : args) {
    out.bytes(std::string_view(static_cast<const char*>(t.data()), static_cast<size_t>(t.size_bytes())));
  }
  return out.take();
}

// Copies the worker's arguments back into `args`; false when the shapes do not match.
bool decode_arguments(const std::string& reply, std::vector<tensor::HostTensor>& args) {
  ByteReader in(reply);
  if (in.u64() != args.size()) return false;
  for (tensor::HostTensor& t : args) {
    std::string_view bytes = in.bytes();
    if (bytes.size() != static_cast<size_t>(t.size_bytes())) return false;
    std::memcpy(t.data(), bytes.data(), bytes.size());
  }
  return true;
}

harness::RunOutcome outcome_of(const WorkerReply& reply) {
  switch (reply.status) {
    case WorkerReply::Status::kOk: return harness::RunOutcome::success();
    case WorkerReply::Status::kFailed: return harness::RunOutcome::failure(harness::RunStatus::kFailed, reply.error);
    case WorkerReply::Status::kCrashed: return harness::RunOutcome::failure(harness::RunStatus::kCrashed, reply.error);
    case WorkerReply::Status::kTimedOut:
      return harness::RunOutcome::failure(harness::RunStatus::kTimedOut, reply.error);
  }
  return harness::RunOutcome::failure(harness::RunStatus::kFailed, reply.error);
}

MeasureStatus status_of(const WorkerReply& reply) {
  switch (reply.status) {
    case WorkerReply::Status::kOk: return MeasureStatus::kOk;
    case WorkerReply::Status::kFailed: return MeasureStatus::kRunFailed;
    case WorkerReply::Status::kCrashed: return MeasureStatus::kCrashed;
    case WorkerReply::Status::kTimedOut: return MeasureStatus::kTimedOut;
  }
  return MeasureStatus::kRunFailed;
}

// The loaded kernel as the verifier sees it: each run goes to the worker.
class WorkerCandidate final : public harness::Candidate {
 public:
  WorkerCandidate(WorkerProcess& worker, std::chrono::milliseconds timeout) : worker_(worker), timeout_(timeout) {}
  std::string name() const override { return "tuning candidate"; }
  harness::RunOutcome run(std::vector<tensor::HostTensor>& args) override {
    WorkerReply reply = worker_.call(encode_arguments('R', args), timeout_);
    if (!reply.ok()) return outcome_of(reply);
    if (!decode_arguments(reply.bytes, args)) {
      return harness::RunOutcome::failure(harness::RunStatus::kFailed, "the worker sent back arguments of other sizes");
    }
    return harness::RunOutcome::success();
  }

 private:
  WorkerProcess& worker_;
  std::chrono::milliseconds timeout_;
};

struct Built {
  size_t index;            // into the batch
  ir::PrimFunc flat;
  std::string hash;
  std::string module_path;  // once compiled
  std::string entry;
  std::string build_error;  // when compiling failed
};

// What a CPU candidate's record is filed under: its printed code's hash.
std::string code_hash(const runtime::Generated& generated) {
  return runtime::CompileCache::key({"cpu kernel", generated.code()});
}

class CpuMeasurer final : public Measurer {
 public:
  CpuMeasurer(const ir::PrimFunc& func, CpuMeasurerOptions options)
      : options_(std::move(options)), verifier_(func, options_.verify) {
    start_worker();
  }

  std::string target_name() const override { return "cpu"; }
  std::string target_arch() const override { return "host"; }
  std::string device() const override { return device_; }
  std::string driver() const override { return ""; }
  const MeasureCosts& costs() const override { return costs_; }
  void set_known(KnownResult known) override { known_ = std::move(known); }

  std::optional<std::string> kernel_hash(const ir::PrimFunc& scheduled) const override {
    try {
      return code_hash(runtime::generate(scheduled, lower::Target::cpu()));
    } catch (const Error&) {
      return std::nullopt;
    }
  }

  std::vector<MeasureResult> measure(const std::vector<ir::PrimFunc>& scheduled) override {
    std::vector<MeasureResult> results(scheduled.size());
    std::vector<Built> pending;
    std::unordered_map<std::string, size_t> first_of_hash;  // within this batch
    std::vector<std::pair<size_t, size_t>> duplicates;       // (index, index of the same code)
    costs_.candidates += static_cast<int64_t>(scheduled.size());
    for (size_t i = 0; i < scheduled.size(); ++i) {
      const double start = thread_cpu_seconds();
      Built b{i, {}, {}, {}, {}, {}};
      try {
        runtime::Generated generated = runtime::generate(scheduled[i], lower::Target::cpu());
        b.hash = code_hash(generated);
        b.flat = std::move(generated.lowered);
      } catch (const Error& e) {
        results[i] = MeasureResult::failure(MeasureStatus::kBuildFailed, std::string("lowering: ") + e.what());
        costs_.lower_and_codegen += thread_cpu_seconds() - start;
        continue;
      }
      costs_.lower_and_codegen += thread_cpu_seconds() - start;
      if (std::optional<MeasureResult> known = lookup(b.hash)) {
        best_.consider(*known);
        results[i] = std::move(*known);
        results[i].from_cache = true;
        ++costs_.cached;
        continue;
      }
      if (auto it = first_of_hash.find(b.hash); it != first_of_hash.end()) {
        duplicates.emplace_back(i, it->second);
        continue;
      }
      first_of_hash.emplace(b.hash, i);
      pending.push_back(std::move(b));
    }
    compile(pending);
    Clock::time_point start = Clock::now();
    for (Built& b : pending) {
      results[b.index] = b.build_error.empty() ? run(b) : MeasureResult::failure(MeasureStatus::kBuildFailed, b.build_error);
      results[b.index].kernel_hash = b.hash;
      cache_[b.hash] = results[b.index];
    }
    costs_.run += seconds_since(start);
    for (auto [index, same] : duplicates) {
      results[index] = results[same];
      results[index].from_cache = true;
      ++costs_.cached;
    }
    return results;
  }

 private:
  std::optional<MeasureResult> lookup(const std::string& hash) const {
    if (auto it = cache_.find(hash); it != cache_.end()) return it->second;
    if (known_) {
      if (std::optional<MeasureResult> r = known_(hash)) return r;
    }
    return std::nullopt;
  }

  void start_worker() {
    auto host = std::make_shared<KernelHost>(options_.timer);
    worker_ = std::make_unique<WorkerProcess>([host](const std::string& request) { return host->serve(request); });
  }

  // Compiles `pending` in modules of functions_per_module, parallel_compiles at a time; a
  // module that fails is compiled again one function per module, so one bad function fails
  // alone with its own log.
  void compile(std::vector<Built>& pending) {
    Clock::time_point start = Clock::now();
    const size_t per_module = static_cast<size_t>(std::max(1, options_.functions_per_module));
    std::vector<std::vector<Built*>> modules;
    for (size_t i = 0; i < pending.size(); i += per_module) {
      std::vector<Built*> members;
      for (size_t k = i; k < std::min(pending.size(), i + per_module); ++k) members.push_back(&pending[k]);
      modules.push_back(std::move(members));
    }
    run_in_parallel(modules);
    std::vector<std::vector<Built*>> alone;
    for (const std::vector<Built*>& m : modules) {
      if (m.size() < 2 || m[0]->build_error.empty()) continue;
      for (Built* b : m) {
        b->build_error.clear();
        alone.push_back({b});
      }
    }
    run_in_parallel(alone);
    costs_.compile += seconds_since(start);
    for (const Built& b : pending) costs_.built += b.build_error.empty() ? 1 : 0;
  }

  void run_in_parallel(const std::vector<std::vector<Built*>>& modules) {
    std::mutex next_lock;
    size_t next = 0;
    auto work = [&] {
      for (;;) {
        size_t m;
        {
          std::lock_guard<std::mutex> guard(next_lock);
          if (next >= modules.size()) return;
          m = next++;
        }
        compile_module(modules[m]);
      }
    };
    std::vector<std::thread> threads;
    size_t count = std::min<size_t>(modules.size(), static_cast<size_t>(std::max(1, options_.parallel_compiles)));
    for (size_t t = 1; t < count; ++t) threads.emplace_back(work);
    if (count > 0) work();
    for (std::thread& t : threads) t.join();
  }

  void compile_module(const std::vector<Built*>& members) {
    std::string source;
    for (size_t k = 0; k < members.size(); ++k) {
      codegen::CpuCodegenOptions cg;
      cg.entry_name = members.size() == 1 ? "dragon_entry" : "dragon_entry_" + std::to_string(k);
      codegen::CpuSource cpu;
      try {
        cpu = codegen::generate_cpu(members[k]->flat, cg);
      } catch (const Error& e) {
        for (Built* b : members) b->build_error = std::string("code generation: ") + e.what();
        return;
      }
      source += cpu.code;
      members[k]->entry = cpu.entry_name;
    }
    runtime::CompileCache& cache = options_.cache ? *options_.cache : runtime::CompileCache::global();
    auto module = runtime::CpuModule::compile(source, options_.compiler, cache);
    for (Built* b : members) {
      if (module) {
        b->module_path = module.value()->path();
      } else {
        b->build_error = module.error().describe();
      }
    }
  }

  // How long one run of a candidate may take: run_timeout, or less once the task has a
  // verified time: a candidate far slower than the best so far (a quadratic recomputation
  // a compute location made) is cut as timed out instead of holding the search for seconds.
  std::chrono::milliseconds run_limit() const {
    if (!best_.ms()) return options_.run_timeout;
    auto relative = std::chrono::milliseconds(static_cast<int64_t>(options_.slow_run_factor * *best_.ms()));
    return std::clamp(relative, options_.min_run_timeout, options_.run_timeout);
  }

  // Loads, verifies and times one built candidate in the worker; restarts the worker when
  // the candidate ended it.
  MeasureResult run(const Built& b) {
    if (!worker_->alive()) start_worker();
    MeasureResult result = run_in_worker(b);
    if (!worker_->alive()) start_worker();
    return result;
  }

  MeasureResult run_in_worker(const Built& b) {
    std::string load = "L" + b.module_path;
    load.push_back('\0');
    load += b.entry;
    if (WorkerReply r = worker_->call(load, options_.run_timeout); !r.ok()) {
      return MeasureResult::failure(r.status == WorkerReply::Status::kFailed ? MeasureStatus::kBuildFailed : status_of(r),
                                    "loading the module: " + r.error);
    }
    WorkerCandidate candidate(*worker_, run_limit());
    if (CheckResult check = verifier_.verify(candidate); !check.ok()) {
      return MeasureResult::failure(check.status, check.error);
    }
    // The worker holds the first input set from the verifier's last run; time on it, then
    // judge what the last timed call left.
    std::vector<tensor::HostTensor> args = verifier_.arguments(0);
    if (WorkerReply r = worker_->call(encode_arguments('R', args), options_.run_timeout); !r.ok()) {
      return MeasureResult::failure(status_of(r), "before timing: " + r.error);
    }
    ByteWriter time_request;
    time_request.byte('T');
    time_request.f64(best_.ms() ? options_.cutoff_factor * *best_.ms() : 0.0);
    WorkerReply timed = worker_->call(time_request.take(), options_.run_timeout);
    if (!timed.ok()) return MeasureResult::failure(status_of(timed), "timing: " + timed.error);
    WorkerReply after = worker_->call("G", options_.run_timeout);
    if (!after.ok()) return MeasureResult::failure(status_of(after), "after timing: " + after.error);
    if (!decode_arguments(after.bytes, args)) {
      return MeasureResult::failure(MeasureStatus::kRunFailed, "the worker sent back arguments of other sizes");
    }
    if (CheckResult check = verifier_.check(0, args); !check.ok()) {
      return MeasureResult::failure(check.status, "after timing: " + check.error);
    }
    MeasureResult result;
    ByteReader in(timed.bytes);
    uint64_t count = in.u64();
    for (uint64_t i = 0; i < count; ++i) result.samples_ms.push_back(in.f64());
    if (result.samples_ms.empty()) return MeasureResult::failure(MeasureStatus::kRunFailed, "timing gave no samples");
    best_.consider(result);
    return result;
  }

  CpuMeasurerOptions options_;
  TaskVerifier verifier_;
  KnownResult known_;
  std::unique_ptr<WorkerProcess> worker_;
  std::unordered_map<std::string, MeasureResult> cache_;
  MeasureCosts costs_;
  std::string device_ = "host cpu";
  BestSoFar best_;  // of this task's results so far, known ones included: the cutoffs' base
};

}  // namespace

std::unique_ptr<Measurer> make_cpu_measurer(const ir::PrimFunc& func, CpuMeasurerOptions options) {
  return std::make_unique<CpuMeasurer>(func, std::move(options));
}

}  // namespace dragon::search
