// GPU tuning (gpu_tuning.h): the measurer of this process, the NVRTC children and the GPU
// worker. Requests to the worker: 'I' (the device and its driver) and 'M' (measure one
// candidate: the problem's spec, the timer's settings, the compiled candidate). A compiled
// candidate travels as its launches, workspaces and CUBIN (not its source).
#include "dragon/bench/gpu_tuning.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <list>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/bench/candidate_builds.h"
#include "dragon/bench/eager_plugin.h"
#include "dragon/harness/physics_floor.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/search/best_so_far.h"
#include "dragon/search/byte_codec.h"
#include "dragon/search/cpu_tuning.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/mutator.h"
#include "dragon/search/thread_cpu_time.h"
#include "dragon/search/worker_process.h"
#include "dragon/support/error.h"
#include "problem_on_device.h"

namespace dragon::bench {
namespace {

using Clock = std::chrono::steady_clock;
using search::ByteReader;
using search::ByteWriter;
using search::MeasureResult;
using search::MeasureStatus;
using search::WorkerProcess;
using search::WorkerReply;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ---- The GPU worker (the child) ------------------------------------------------------------

struct Verdict {
  MeasureStatus status = MeasureStatus::kOk;
  std::string error;
  bool poisoned = false;  // a CUDA error that may have broken the context: start a new worker
  std::vector<double> samples_ms;
  // Where the worker's time went (wall): loading, the checked calls, timing.
  double load_ms = 0, check_ms = 0, time_ms = 0;
};

class GpuWorkerHost {
 public:
  std::string serve(const std::string& request) {
    ByteReader in(request);
    char op = in.byte();
    if (op == 'I') return info();
    if (op == 'P') return prepare(in);
    if (op == 'M') return encode(measure(in));
    throw InternalError(fmt::format("GPU worker: unknown request '{}'", op));
  }

 private:
  void start_services() {
    if (services_.driver) return;
    Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
    if (!driver) throw UserError("no CUDA GPU: " + driver.error().describe());
    services_.driver = driver.value();
    filler_ = std::make_unique<DeviceFiller>(services_.driver);
    comparer_ = std::make_unique<DeviceComparer>(services_.driver);
    services_.filler = filler_.get();
    services_.comparer = comparer_.get();
    timer_ = or_fail(harness::GpuTimer::create(), "the GPU timer");
    const EagerPlugin& plugin = eager_plugin();
    if (plugin.baselines && plugin.baselines->cuda_available()) services_.eager = plugin.baselines;
  }

  // Sets up the problem of a spec and seed (inputs, reference), so that the candidate
  // requests after it run under the candidate's own, shorter limit.
  std::string prepare(ByteReader& in) {
    std::string spec(in.bytes());
    uint64_t seed = in.u64();
    start_services();
    problem(spec, seed);
    return {};
  }

  std::string info() {
    start_services();
    ByteWriter out;
    out.bytes(services_.driver->device_name());
    out.bytes(harness::read_gpu_state().driver_version);
    out.bytes(services_.eager ? "libtorch eager in f64" : "our f64 twin (no eager plugin with CUDA)");
    return out.take();
  }

  // The problem of `spec`, set up once and kept while few problems are held: the task
  // scheduler moves between tasks, and setting one up (inputs, the f64 reference, eager's
  // run) costs more than many candidates. The least recently used goes first; a problem
  // that does not fit beside the others gets the device to itself.
  struct Held {
    std::string spec;
    uint64_t seed = 0;
    ops::Workload workload;
    std::unique_ptr<ProblemOnDevice> problem;
    harness::PhysicsFloor floor;
    int64_t bytes = 0;
  };
  static constexpr size_t kMaxHeld = 16;
  static constexpr int64_t kMaxHeldBytes = int64_t{48} << 30;

  static int64_t device_bytes(const ir::PrimFunc& func) {
    int64_t bytes = 0;
    for (const ir::Param& p : func->params) {
      int64_t elements = 1;
      for (int64_t e : p.buffer->shape) elements *= e;
      bytes += elements * element_bytes(p.buffer->dtype);
      // An output also has its f64 reference and eager's scratch copy.
      if (p.role != ir::ParamRole::kInput) bytes += elements * (8 + element_bytes(p.buffer->dtype));
    }
    return bytes;
  }

  Held& problem(const std::string& spec, uint64_t seed) {
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->spec == spec && it->seed == seed) {
        held_.splice(held_.begin(), held_, it);
        return held_.front();
      }
    }
    Held h;
    h.spec = spec;
    h.seed = seed;
    h.workload = ops::OpRegistry::global().make_workload(spec);
    h.bytes = device_bytes(h.workload.func);
    int64_t total = h.bytes;
    for (const Held& other : held_) total += other.bytes;
    while (!held_.empty() && (held_.size() >= kMaxHeld || total > kMaxHeldBytes)) {
      total -= held_.back().bytes;
      held_.pop_back();  // frees its device memory
    }
    held_.push_front(std::move(h));
    Held& fresh = held_.front();
    try {
      set_up(fresh);
    } catch (const StepFailure&) {
      // Perhaps out of memory beside the others: alone, once more.
      Held alone = std::move(fresh);
      held_.clear();
      alone.problem.reset();
      held_.push_front(std::move(alone));
      set_up(held_.front());
    }
    return held_.front();
  }

  void set_up(Held& h) {
    h.problem = std::make_unique<ProblemOnDevice>(services_, h.workload, h.seed);
    h.problem->compute_reference();
    // Eager's own error calibrates the tolerance, as in `dragon bench`.
    if (h.problem->has_eager()) h.problem->run_eager();
    h.floor = harness::physics_floor(h.workload.func, harness::DevicePeaks::h200_spec_sheet());
  }

  static Verdict failed(MeasureStatus status, std::string error, bool poisoned = false) {
    Verdict v;
    v.status = status;
    v.error = std::move(error);
    v.poisoned = poisoned;
    return v;
  }

  // measure_phases with the phases' wall times filled in, however it ends.
  Verdict measure(ByteReader& in) {
    Phases phases;
    Verdict v = measure_phases(in, phases);
    v.load_ms = phases.load_ms;
    v.check_ms = phases.check_ms;
    v.time_ms = phases.time_ms;
    return v;
  }

  struct Phases {
    double load_ms = 0, check_ms = 0, time_ms = 0;
  };

  Verdict measure_phases(ByteReader& in, Phases& phases) {
    std::string spec(in.bytes());
    uint64_t seed = in.u64();
    harness::GpuTimerOptions timer;
    timer.warmup_calls = static_cast<int>(in.u64());
    timer.min_calls = static_cast<int>(in.u64());
    timer.max_calls = static_cast<int>(in.u64());
    timer.max_seconds = in.f64();
    timer.target_relative_ci = in.f64();
    timer.flush_l2 = in.u64() != 0;
    const double cutoff_ms = in.f64();  // 0: none
    timer.abandon_above_ms = in.f64();   // 0: none
    const double slow_run_ms = in.f64();  // 0: none
    runtime::CudaBuild build = decode_build(in);
    start_services();
    Held& held = problem(spec, seed);
    ProblemOnDevice& p = *held.problem;
    const harness::PhysicsFloor& floor = held.floor;

    Clock::time_point phase = Clock::now();
    Expected<std::unique_ptr<runtime::LoadedCudaFunction>> loaded = runtime::LoadedCudaFunction::load(std::move(build));
    phases.load_ms = 1000 * seconds_since(phase);
    if (!loaded) return failed(MeasureStatus::kRunFailed, "loading: " + loaded.error().describe(), true);
    const runtime::LoadedCudaFunction& kernels = *loaded.value();
    std::vector<runtime::DevicePtr> results;
    for (const OutputSlot& slot : p.outputs()) results.push_back(p.params()[slot.param]);
    // Two checked runs: outputs pre-filled with NaN (0xff), then with zeros, so an element
    // the kernel leaves alone fails one of them.
    double first_call_ms = 0;
    phase = Clock::now();
    for (unsigned char prefill : {static_cast<unsigned char>(0xff), static_cast<unsigned char>(0)}) {
      p.prefill_outputs(prefill);
      Clock::time_point launched = Clock::now();
      if (Status s = kernels.launch(p.params()); !s.ok()) {
        return failed(MeasureStatus::kRunFailed, "launch: " + s.error().describe(), true);
      }
      if (Status s = services_.driver->synchronize(); !s.ok()) {
        return failed(MeasureStatus::kRunFailed, "run: " + s.error().describe(), true);
      }
      const double run_ms = 1000 * seconds_since(launched);
      if (prefill == 0) first_call_ms = run_ms;  // the warm call (module loaded)
      if (slow_run_ms > 0 && run_ms > slow_run_ms) {
        phases.check_ms = 1000 * seconds_since(phase);
        return failed(MeasureStatus::kTimedOut,
                      fmt::format("its run took {:.4g} ms, past {:.4g} ms (the task's best so far times the slow-run "
                                  "factor): not checked or timed further",
                                  run_ms, slow_run_ms));
      }
      std::vector<OutputCheck> checks = p.check_outputs(results);
      if (!ProblemOnDevice::all_ok(checks)) {
        return failed(MeasureStatus::kWrongResult,
                      fmt::format("outputs pre-filled with {:#04x}: {}", prefill, ProblemOnDevice::describe_failures(checks)));
      }
    }
    phases.check_ms = 1000 * seconds_since(phase);
    // A verified kernel far slower than the best so far needs no precise time: its checked
    // call is its one sample (wall time around launch and synchronize, slightly above the
    // timer's). A slow kernel gets few calls, as in `dragon bench`.
    if (cutoff_ms > 0 && first_call_ms > cutoff_ms) {
      Verdict v;
      v.samples_ms = {first_call_ms};
      return v;
    }
    if (first_call_ms > 250) {
      timer.warmup_calls = 0;
      timer.min_calls = std::min(timer.min_calls, 3);
    }
    phase = Clock::now();
    Expected<harness::GpuTiming> timing = timer_->time([&](int) { return kernels.launch(p.params()); }, timer);
    phases.time_ms = 1000 * seconds_since(phase);
    if (!timing) return failed(MeasureStatus::kRunFailed, "timing: " + timing.error().describe(), true);
    // The last timed call's outputs must still be right.
    std::vector<OutputCheck> checks = p.check_outputs(results);
    if (!ProblemOnDevice::all_ok(checks)) {
      return failed(MeasureStatus::kWrongResult, "after timing: " + ProblemOnDevice::describe_failures(checks));
    }
    if (harness::faster_than_physics(timing.value().median_ms, floor)) {
      return failed(MeasureStatus::kWrongResult, fmt::format("{:.4g} ms is below the physics floor: {}",
                                                             timing.value().median_ms, floor.describe()));
    }
    Verdict v;
    v.samples_ms = timing.value().samples_ms;
    return v;
  }

  static std::string encode(const Verdict& v) {
    ByteWriter out;
    out.u64(static_cast<uint64_t>(v.status));
    out.bytes(v.error);
    out.u64(v.poisoned ? 1 : 0);
    out.u64(v.samples_ms.size());
    for (double s : v.samples_ms) out.f64(s);
    out.f64(v.load_ms);
    out.f64(v.check_ms);
    out.f64(v.time_ms);
    return out.take();
  }

  DeviceServices services_;
  std::unique_ptr<DeviceFiller> filler_;
  std::unique_ptr<DeviceComparer> comparer_;
  std::unique_ptr<harness::GpuTimer> timer_;  // one flush buffer for every candidate
  std::list<Held> held_;  // most recently used first
};

}  // namespace

// ---- The GPU worker as this process sees it --------------------------------------------------

struct GpuTuning::Worker {
  std::unique_ptr<WorkerProcess> process;
  std::string device, driver, reference;
  std::string last_spec;  // the problem the worker holds, when it is alive
  int restarts = 0;

  void start() {
    auto host = std::make_shared<GpuWorkerHost>();
    process = std::make_unique<WorkerProcess>([host](const std::string& r) { return host->serve(r); });
  }
  // A reply, restarting the worker when the request ended it.
  WorkerReply call(const std::string& request, std::chrono::milliseconds timeout) {
    if (!process || !process->alive()) {
      start();
      ++restarts;
    }
    WorkerReply reply = process->call(request, timeout);
    if (!process->alive()) process.reset();
    return reply;
  }
};

namespace {

MeasureStatus status_of(const WorkerReply& reply) {
  return reply.status == WorkerReply::Status::kTimedOut ? MeasureStatus::kTimedOut
         : reply.status == WorkerReply::Status::kCrashed ? MeasureStatus::kCrashed
                                                          : MeasureStatus::kRunFailed;
}

struct Pending {
  size_t index = 0;
  ir::PrimFunc flat;
  std::string hash;
  // Hashes of its kernels' definitions without their names (codegen::kernel_definition_hashes):
  // candidates that share kernels are put in one program, which defines each once.
  std::vector<size_t> kernel_keys;
};

class CudaMeasurer final : public search::Measurer {
 public:
  CudaMeasurer(std::shared_ptr<GpuTuning::Worker> worker, std::string spec, const GpuTuningOptions& options,
               search::MeasureGroup* group)
      : worker_(std::move(worker)), spec_(std::move(spec)), options_(options), group_(group) {}

  std::string target_name() const override { return "cuda"; }
  std::string target_arch() const override { return lower::Target::cuda_h200().arch; }
  std::string device() const override { return worker_->device; }
  std::string driver() const override { return worker_->driver; }
  const search::MeasureCosts& costs() const override { return costs_; }
  void set_known(search::KnownResult known) override { known_ = std::move(known); }

  search::MeasureGroup* group() override { return group_; }

  // What lowering leaves for the compilers: the results known so far, the candidates to
  // build (their flat functions), and the duplicates of those in the batch.
  struct Prepared {
    std::vector<MeasureResult> results;
    std::vector<Pending> lowered;
    std::vector<Pending*> pending;
    std::vector<std::pair<size_t, size_t>> duplicates;  // (index, the index it repeats)
  };

  // Alone, a batch is a group of one: the same builds in waves and runs.
  std::vector<MeasureResult> measure(const std::vector<ir::PrimFunc>& scheduled) override {
    return group_->measure({search::MeasureBatch{this, scheduled}}).front();
  }

  std::optional<std::string> kernel_hash(const ir::PrimFunc& scheduled) const override {
    const lower::Target target = lower::Target::cuda_h200();
    CudaLowering lowering = lower_for_cuda(scheduled, target);
    if (!lowering.generated) return std::nullopt;
    return lowering.generated->cuda_kernel_hash(target.arch);
  }

  // Lowers and prints every candidate (on threads: the CPU work per candidate) and
  // answers what the caches know.
  Prepared prepare(const std::vector<ir::PrimFunc>& scheduled) {
    const lower::Target target = lower::Target::cuda_h200();
    Prepared prep;
    prep.results.resize(scheduled.size());
    prep.lowered.resize(scheduled.size());
    std::vector<double> cpu_seconds(scheduled.size(), 0);
    costs_.candidates += static_cast<int64_t>(scheduled.size());
    const size_t threads = options_.lowering_threads > 0 ? static_cast<size_t>(options_.lowering_threads)
                                                         : std::max(1u, std::thread::hardware_concurrency());
    {
      std::atomic<size_t> next{0};
      auto work = [&] {
        for (size_t i = next++; i < scheduled.size(); i = next++) {
          const double start = search::thread_cpu_seconds();
          prep.lowered[i].index = i;
          CudaLowering lowering = lower_for_cuda(scheduled[i], target);
          if (lowering.generated) {
            prep.lowered[i].hash = lowering.generated->cuda_kernel_hash(target.arch);
            prep.lowered[i].kernel_keys =
                codegen::kernel_definition_hashes(std::get<codegen::CudaSource>(lowering.generated->source));
            prep.lowered[i].flat = std::move(lowering.generated->lowered);
          } else {
            prep.results[i] = MeasureResult::failure(lowering.failure, lowering.why);
          }
          cpu_seconds[i] = search::thread_cpu_seconds() - start;
        }
      };
      std::vector<std::thread> pool;
      for (size_t t = 1; t < std::min(threads, scheduled.size()); ++t) pool.emplace_back(work);
      work();
      for (std::thread& t : pool) t.join();
    }
    for (double s : cpu_seconds) costs_.lower_and_codegen += s;

    std::unordered_map<std::string, size_t> first_of_hash;
    for (Pending& p : prep.lowered) {
      if (!p.flat.defined()) continue;
      if (std::optional<MeasureResult> known = lookup(p.hash)) {
        best_.consider(*known);
        prep.results[p.index] = std::move(*known);
        prep.results[p.index].from_cache = true;
        ++costs_.cached;
        continue;
      }
      if (auto it = first_of_hash.find(p.hash); it != first_of_hash.end()) {
        prep.duplicates.emplace_back(p.index, it->second);
        continue;
      }
      first_of_hash.emplace(p.hash, p.index);
      prep.pending.push_back(&p);
    }
    return prep;
  }

  // The result of pending[k] of `prep`, from its build: a build failure, or the worker's.
  void run_pending(Prepared& prep, size_t k, Expected<runtime::CudaBuild>& build) {
    Clock::time_point start = Clock::now();
    MeasureResult& r = prep.results[prep.pending[k]->index];
    if (!build) {
      r = MeasureResult::failure(MeasureStatus::kBuildFailed, build.error().describe());
    } else {
      ++costs_.built;
      r = run(build.value());
    }
    r.kernel_hash = prep.pending[k]->hash;
    cache_[prep.pending[k]->hash] = r;
    costs_.run += seconds_since(start);
  }

  // The results once every pending candidate has run: duplicates get their first's.
  std::vector<MeasureResult> complete(Prepared prep) {
    for (auto [index, same] : prep.duplicates) {
      prep.results[index] = prep.results[same];
      prep.results[index].from_cache = true;
      ++costs_.cached;
    }
    return std::move(prep.results);
  }

  void add_compile_seconds(double seconds) { costs_.compile += seconds; }

 private:
  std::optional<MeasureResult> lookup(const std::string& hash) const {
    if (auto it = cache_.find(hash); it != cache_.end()) return it->second;
    if (known_) return known_(hash);
    return std::nullopt;
  }

  MeasureResult run(const runtime::CudaBuild& build) {
    ByteWriter out;
    out.byte('M');
    out.bytes(spec_);
    out.u64(options_.seed);
    out.u64(static_cast<uint64_t>(options_.timer.warmup_calls));
    out.u64(static_cast<uint64_t>(options_.timer.min_calls));
    out.u64(static_cast<uint64_t>(options_.timer.max_calls));
    out.f64(options_.timer.max_seconds);
    out.f64(options_.timer.target_relative_ci);
    out.u64(options_.timer.flush_l2 ? 1 : 0);
    out.f64(best_.ms() ? options_.cutoff_factor * *best_.ms() : 0.0);
    out.f64(best_.ms() ? options_.abandon_factor * *best_.ms() : 0.0);
    out.f64(slow_run_ms().value_or(0.0));
    encode_build(out, build);
    // A worker without this problem sets it up first, under the setup's longer limit; the
    // candidate then runs under its own.
    if (!worker_->process || !worker_->process->alive() || worker_->last_spec != spec_) {
      ByteWriter prepare;
      prepare.byte('P');
      prepare.bytes(spec_);
      prepare.u64(options_.seed);
      WorkerReply set_up = worker_->call(prepare.take(), options_.setup_timeout);
      if (!set_up.ok()) {
        worker_->last_spec.clear();
        return MeasureResult::failure(status_of(set_up), "setting up the problem: " + set_up.error);
      }
      worker_->last_spec = spec_;
    }
    WorkerReply reply = worker_->call(out.take(), candidate_timeout());
    if (!reply.ok()) {
      worker_->last_spec.clear();
      return MeasureResult::failure(status_of(reply), reply.error);
    }
    ByteReader in(reply.bytes);
    MeasureResult r;
    r.status = static_cast<MeasureStatus>(in.u64());
    r.error = std::string(in.bytes());
    if (in.u64() != 0) {
      worker_->process.reset();  // a broken context: the next candidate gets a new worker
      worker_->last_spec.clear();
    }
    uint64_t count = in.u64();
    for (uint64_t i = 0; i < count; ++i) r.samples_ms.push_back(in.f64());
    costs_.run_load += in.f64() / 1000;
    costs_.run_check += in.f64() / 1000;
    costs_.run_time += in.f64() / 1000;
    costs_.timed_calls += static_cast<int64_t>(count);
    best_.consider(r);
    return r;
  }

  // The limit of one candidate's request. Once the task has a best time, a candidate needs
  // at most its load, two checked runs stopped at the slow-run limit, and a timing of
  // timer.max_seconds: a few times the slow-run limit and a few seconds more. A kernel that
  // runs for minutes is killed then, not after candidate_timeout (on KernelBench's 1.6G-
  // element softmax, rounds of such candidates outlasted the tuning budget by minutes).
  std::chrono::milliseconds candidate_timeout() const {
    const std::optional<double> slow_run = slow_run_ms();
    if (!slow_run) return options_.candidate_timeout;
    const auto bounded = std::chrono::milliseconds(static_cast<int64_t>(3 * *slow_run + 1000 * options_.timer.max_seconds)) +
                         options_.candidate_timeout_margin;
    return std::min(options_.candidate_timeout, bounded);
  }

  // A first checked run longer than this stops the candidate (GpuTuningOptions::
  // slow_run_factor); none until the task has a best time.
  std::optional<double> slow_run_ms() const {
    if (!best_.ms()) return std::nullopt;
    return std::max(options_.slow_run_factor * *best_.ms(), options_.min_slow_run_ms);
  }

  std::shared_ptr<GpuTuning::Worker> worker_;
  std::string spec_;
  GpuTuningOptions options_;
  search::MeasureGroup* group_;
  search::KnownResult known_;
  std::unordered_map<std::string, MeasureResult> cache_;
  search::MeasureCosts costs_;
  search::BestSoFar best_;  // of this task's results so far, known ones included: the cutoffs' base
};

// Several tasks' batches of a round: lowered per task, compiled in one spread of NVRTC
// children, then run task by task in the worker.
class CudaMeasureGroup final : public search::MeasureGroup {
 public:
  CudaMeasureGroup(NvrtcChildren& compilers, int functions_per_program)
      : compilers_(compilers), functions_per_program_(functions_per_program) {}

  std::vector<std::vector<MeasureResult>> measure(const std::vector<search::MeasureBatch>& batches) override {
    std::vector<CudaMeasurer*> measurers;
    std::vector<CudaMeasurer::Prepared> prepared;
    std::vector<ir::PrimFunc> flats;
    for (const search::MeasureBatch& b : batches) {
      auto* m = dynamic_cast<CudaMeasurer*>(b.measurer);
      if (m == nullptr) throw InternalError("a GPU tuning group was given another kind of measurer");
      measurers.push_back(m);
      prepared.push_back(m->prepare(b.scheduled));
    }
    if (measurers.empty()) return {};
    // Which batch and which of its pending candidates each flat function is, ordered by
    // their kernels: the programs are consecutive runs of candidates, and a program defines
    // a kernel its members share once. A round's 128 softmax candidates go to 30 programs
    // of about 4 (two waves on 15 compilers), where neighbours in draw order rarely share.
    std::vector<std::pair<size_t, size_t>> owner;
    for (size_t b = 0; b < prepared.size(); ++b) {
      for (size_t k = 0; k < prepared[b].pending.size(); ++k) owner.emplace_back(b, k);
    }
    std::stable_sort(owner.begin(), owner.end(), [&](const auto& x, const auto& y) {
      return prepared[x.first].pending[x.second]->kernel_keys < prepared[y.first].pending[y.second]->kernel_keys;
    });
    for (auto [b, k] : owner) flats.push_back(prepared[b].pending[k]->flat);
    // Two programs per compiler when there is enough to share: the first programs'
    // candidates run on the GPU while the rest compile.
    CandidateBuildOptions build{.functions_per_program = functions_per_program_};
    if (flats.size() >= 4 * compilers_.size()) build.min_waves = 2;
    Clock::time_point start = Clock::now();
    double running = 0;  // of the wall time, spent running candidates (not compiling)
    compilers_.build(flats, plan_programs(flats.size(), build, compilers_.size()),
                     [&](size_t index, Expected<runtime::CudaBuild> built) {
                       Clock::time_point ran = Clock::now();
                       auto [b, k] = owner[index];
                       measurers[b]->run_pending(prepared[b], k, built);
                       running += seconds_since(ran);
                     });
    // The compilers' share of the wall time, spread over the candidates.
    const double compiling = std::max(0.0, seconds_since(start) - running);
    std::vector<std::vector<MeasureResult>> results;
    for (size_t b = 0; b < measurers.size(); ++b) {
      if (!flats.empty()) {
        measurers[b]->add_compile_seconds(compiling * static_cast<double>(prepared[b].pending.size()) /
                                          static_cast<double>(flats.size()));
      }
      results.push_back(measurers[b]->complete(std::move(prepared[b])));
    }
    return results;
  }

 private:
  NvrtcChildren& compilers_;
  int functions_per_program_;
};

}  // namespace

CudaLowering lower_for_cuda(const ir::PrimFunc& scheduled, const lower::Target& target) {
  CudaLowering out;
  try {
    runtime::Generated generated = runtime::generate(scheduled, target);
    if (std::optional<std::string> why = excessive_workspaces(generated, scheduled)) {
      out.failure = MeasureStatus::kRejected;
      out.why = *why;
      return out;
    }
    out.generated = std::move(generated);
  } catch (const UserError& e) {  // a schedule the GPU cannot run
    out.failure = MeasureStatus::kRejected;
    out.why = std::string("lowering: ") + e.what();
  } catch (const Error& e) {
    out.failure = MeasureStatus::kBuildFailed;
    out.why = std::string("lowering: ") + e.what();
  }
  return out;
}

std::optional<std::string> excessive_workspaces(const runtime::Generated& generated, const ir::PrimFunc& scheduled) {
  int64_t scratch = 0;
  for (const codegen::Workspace& w : std::get<codegen::CudaSource>(generated.source).workspaces) scratch += w.bytes;
  int64_t own = 0;
  for (const ir::Param& p : scheduled->params) own += p.buffer->num_elements() * p.buffer->dtype.bytes();
  const int64_t limit = std::max<int64_t>(int64_t{1} << 30, 4 * own);
  if (scratch <= limit) return std::nullopt;
  return fmt::format("its workspaces take {:.3g} GiB, more than 1 GiB and 4 times the problem's buffers ({:.3g} GiB)",
                     static_cast<double>(scratch) / (1 << 30), static_cast<double>(own) / (1 << 30));
}

GpuTuning::GpuTuning(const search::RuleSet& rules, GpuTuningOptions options)
    : rules_(rules), options_(options) {
  // The compilers first, so none of them holds the worker's pipes.
  compilers_ = std::make_unique<NvrtcChildren>(
      compile_children({.processes = options_.compile_processes}), lower::Target::cuda_h200(), options_.setup_timeout);
  group_ = std::make_unique<CudaMeasureGroup>(*compilers_, options_.functions_per_program);
  worker_ = std::make_shared<Worker>();
  worker_->start();
  WorkerReply reply = worker_->call("I", options_.setup_timeout);
  if (!reply.ok()) throw UserError("dragon tune --target cuda needs a CUDA GPU: " + reply.error);
  ByteReader in(reply.bytes);
  worker_->device = std::string(in.bytes());
  worker_->driver = std::string(in.bytes());
  worker_->reference = std::string(in.bytes());
}

GpuTuning::~GpuTuning() = default;

const std::string& GpuTuning::device() const { return worker_->device; }
const std::string& GpuTuning::driver() const { return worker_->driver; }

search::TaskEnvironment GpuTuning::environment(const search::TuningTask& task) {
  if (task.spec.empty()) throw UserError(task.name + ": GPU tuning builds its problem from an op spec, and it has none");
  search::TaskEnvironment env;
  env.target = lower::Target::cuda_h200();
  env.space = search::make_rule_space(task.func, env.target, rules_);
  env.measurer = std::make_shared<CudaMeasurer>(worker_, task.spec, options_, group_.get());
  const schedule::Schedule default_schedule = search::default_schedule(task.func, env.target);
  env.default_schedule = default_schedule.func();
  // A default that is a design-space candidate (postprocessed: the tensor-core default)
  // seeds the search; the CUDA-core default is hand-made and has nothing to mutate.
  if (default_schedule.trace().postproc_start()) env.default_trace = default_schedule.trace();
  env.mutators = search::default_mutators(env.target);
  measurers_.push_back(env.measurer);
  return env;
}

search::EvolutionarySearchOptions GpuTuning::search_options() {
  search::EvolutionarySearchOptions o;
  o.population = 256;
  o.genetic_num_iters = 3;
  return o;
}

std::string GpuTuning::costs_summary() const {
  return search::describe_costs(measurers_) +
         fmt::format("; GPU worker restarts {}; NVRTC children {} (restarts {}), {} kernel definitions compiled for {} "
                     "kernels (the rest shared), NVRTC CPU {:.1f} s over {} programs ({:.1f} ms a kernel definition); "
                     "reference {}",
                     worker_->restarts, compilers_->size(), compilers_->restarts(), compilers_->kernels_defined(),
                     compilers_->kernels_launched(), compilers_->work().cpu_seconds, compilers_->work().programs,
                     compilers_->kernels_defined() > 0 ? 1000 * compilers_->work().cpu_seconds /
                                                             static_cast<double>(compilers_->kernels_defined())
                                                       : 0.0,
                     worker_->reference);
}

}  // namespace dragon::bench
