#include "dragon/bench/suite_run.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "dragon/bench/cublas_gemm.h"
#include "dragon/bench/cudnn_baseline.h"
#include "dragon/bench/device_comparison.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/eager_plugin.h"
#include "dragon/harness/f64_promotion.h"
#include "dragon/harness/physics_floor.h"
#include "dragon/harness/tolerance.h"
#include "dragon/interp/input_generator.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/support/error.h"
#include "problem_buffers.h"

namespace dragon::bench {
namespace {

using runtime::DevicePtr;
using Clock = std::chrono::steady_clock;

// A scheduled function compiled for the H200 and loaded.
std::unique_ptr<runtime::LoadedCudaFunction> build_kernels(const ir::PrimFunc& scheduled) {
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<Expected<runtime::CudaBuild>> builds =
      runtime::compile_cuda_all({lower::lower(scheduled, target).func}, target);
  return or_fail(runtime::LoadedCudaFunction::load(or_fail(std::move(builds[0]), "NVRTC")), "loading the kernels");
}

// The default schedule until search exists: every block nest bound by AutoBind, with
// enough thread blocks to fill the H200's 132 SMs several times over.
ir::PrimFunc default_schedule(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  search::AutoBindOptions options;
  options.max_threadblocks = 1056;  // 8 per SM
  search::auto_bind(sch, options);
  return sch.func();
}

std::string find_script(const std::string& dir, const suites::Problem& problem) {
  if (dir.empty()) return "";
  for (const std::string& stem : {problem.id, problem.name}) {
    std::filesystem::path path = std::filesystem::path(dir) / (stem + ".script");
    if (std::filesystem::exists(path)) return path.string();
  }
  return "";
}

harness::GpuTimerOptions timer_for(const harness::GpuTimerOptions& base, double first_call_seconds) {
  harness::GpuTimerOptions options = base;
  // A slow kernel gets fewer calls: the cap bounds the measuring phase only after
  // min_calls, so several seconds per call would otherwise cost minutes per problem.
  if (first_call_seconds > 0.25) {
    options.warmup_calls = 1;
    options.min_calls = 3;
  }
  return options;
}

Measured time_call(const std::function<Status()>& call, const harness::GpuTimerOptions& base,
                   double first_call_seconds) {
  harness::GpuTiming timing =
      or_fail(harness::time_gpu([&](int) { return call(); }, timer_for(base, first_call_seconds)), "timing");
  return Measured::from(timing);
}

// Everything one problem needs on the device.
struct Context {
  runtime::CudaDriver* driver;
  DeviceFiller* filler;
  DeviceComparer* comparer;
  const EagerBaselines* eager;  // null without the plugin
  const SuiteRunOptions* options;
  harness::DevicePeaks floor_peaks;
};

class ProblemRunner {
 public:
  ProblemRunner(Context& context, const suites::Problem& problem) : ctx_(context), problem_(problem) {}

  ProblemResult run() {
    ProblemResult r;
    r.id = problem_.id;
    r.name = problem_.name;
    r.spec = problem_.spec;
    r.output_shape = problem_.output;
    r.ours.name = "ours";
    Clock::time_point start = Clock::now();
    if (!problem_.supported()) {
      r.status = "unsupported";
      r.message = problem_.output;
      r.reference = "none";
      return r;
    }
    try {
      run_checked(r);
    } catch (const std::exception& e) {
      if (r.ours.status.empty()) r.ours.status = "failed";
      if (r.ours.error.empty()) r.ours.error = e.what();
    }
    r.status = r.ours.status;
    r.message = r.ours.error;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }

 private:
  void run_checked(ProblemResult& r) {
    const ops::OpRegistry& registry = ops::OpRegistry::global();
    workload_ = registry.make_workload(problem_.spec);
    values_ = ops::canonical_values(registry.parse(problem_.spec));
    harness::PhysicsFloor floor = harness::physics_floor(workload_.func, ctx_.floor_peaks);
    r.bytes = floor.bytes;
    r.flops = floor.flops;
    r.floor_ms = floor.floor_ms;
    r.compute_bound = floor.compute_bound;

    ir::PrimFunc scheduled;
    std::string script = find_script(ctx_.options->scripts_dir, problem_);
    try {
      if (!script.empty()) {
        if (!ctx_.options->apply_script) throw UserError("no script reader was given to apply " + script);
        scheduled = ctx_.options->apply_script(workload_.func, script);
        r.schedule = "script " + script;
      } else {
        scheduled = default_schedule(workload_.func);
        r.schedule = "default schedule (auto_bind)";
      }
      r.ours.name = "ours (" + r.schedule + ")";
      kernels_ = build_kernels(scheduled);
    } catch (const std::exception& e) {
      r.ours.status = "failed";
      r.ours.error = std::string("build: ") + e.what();
      // The baselines still run: their times are worth having without ours.
    }

    allocate_and_fill();
    compute_reference(r);
    if (ctx_.eager && ctx_.options->eager) r.baselines.push_back(run_eager());
    if (ctx_.options->cublas) {
      if (std::optional<Contender> cublas = run_cublas(); cublas) r.baselines.push_back(std::move(*cublas));
    }
    if (ctx_.options->cudnn) {
      if (std::optional<Contender> cudnn = run_cudnn(); cudnn) r.baselines.push_back(std::move(*cudnn));
    }
    if (kernels_) run_ours(r, floor);
  }

  void allocate_and_fill() {
    buffers_ = std::make_unique<ProblemBuffers>(ctx_.driver, workload_);
    buffers_->fill_inputs(*ctx_.filler, InputDistribution::kRand, ctx_.options->seed);
  }

  void compute_reference(ProblemResult& r) {
    if (ctx_.eager && ctx_.options->eager && !ctx_.eager->call(workload_.op->name).empty()) {
      try {
        buffers_->compute_eager_reference(*ctx_.eager, values_);
        r.reference = "libtorch eager in f64";
        return;
      } catch (const std::exception& e) {
        r.reference = std::string("libtorch eager in f64 failed (") + e.what() + "); ";
      }
    }
    // Our own f64 twin under the default schedule: independent of the schedule under test,
    // not of our op definitions (the libtorch tests cover those).
    ir::PrimFunc twin = harness::promote_floats_to_f64(workload_.func);
    std::unique_ptr<runtime::LoadedCudaFunction> kernels = build_kernels(default_schedule(twin));
    std::vector<DevicePtr> twin_ptrs = device_params();
    const auto& params = workload_.func->params;
    for (size_t i = 0; i < params.size(); ++i) {
      ir::DataType dtype = params[i].buffer->dtype;
      if (params[i].role != ir::ParamRole::kInput || !dtype.is_float() || dtype == ir::DataType::f64()) continue;
      int64_t elements = 1;
      for (int64_t extent : params[i].buffer->shape) elements *= extent;
      twin_ptrs[i] = buffers_->allocate(elements * 8, "the f64 copy of " + params[i].buffer->name);
      ctx_.comparer->widen(device_params()[i], dtype, twin_ptrs[i], elements);
    }
    // Float outputs become f64 in the twin and land in the reference directly; the others
    // (indices) keep their type and are widened afterwards.
    std::vector<std::pair<const OutputSlot*, DevicePtr>> widen_later;
    for (const OutputSlot& slot : outputs()) {
      if (slot.dtype.is_float()) {
        twin_ptrs[slot.param] = slot.reference;
      } else {
        twin_ptrs[slot.param] = buffers_->allocate(slot.elements * element_bytes(slot.dtype), "the twin's " + slot.name);
        widen_later.emplace_back(&slot, twin_ptrs[slot.param]);
      }
    }
    or_fail(kernels->launch(twin_ptrs), "the f64 twin");
    for (const auto& [slot, ptr] : widen_later) ctx_.comparer->widen(ptr, slot->dtype, slot->reference, slot->elements);
    or_fail(ctx_.driver->synchronize(), "the f64 twin");
    r.reference += "our f64 twin (default schedule)";
  }

  // The output checks of a run whose results are in `results` (one device buffer per output,
  // each of the output's dtype). `reference_errors`, when given, calibrates the tolerance.
  std::vector<OutputCheck> check_outputs(const std::vector<DevicePtr>& results,
                                         const std::vector<double>* reference_errors) {
    std::vector<OutputCheck> checks;
    for (size_t o = 0; o < outputs().size(); ++o) {
      const OutputSlot& slot = outputs()[o];
      DeviceComparison c = ctx_.comparer->compare(results[o], slot.dtype, slot.reference, slot.elements);
      OutputCheck check;
      check.output = slot.name;
      check.normalized_error = c.normalized_error();
      check.tolerance = reference_errors ? harness::calibrated_tolerance(slot.dtype, (*reference_errors)[o])
                                         : harness::tolerance_floor(slot.dtype);
      check.ok = c.nonfinite_mismatches == 0 && check.normalized_error <= check.tolerance;
      check.detail = c.describe();
      checks.push_back(check);
    }
    return checks;
  }

  static bool all_ok(const std::vector<OutputCheck>& checks) {
    for (const OutputCheck& c : checks) {
      if (!c.ok) return false;
    }
    return true;
  }

  std::vector<DevicePtr> scratch_outputs(const std::string& who) {
    std::vector<DevicePtr> buffers;
    for (const OutputSlot& slot : outputs()) {
      buffers.push_back(buffers_->allocate(slot.elements * element_bytes(slot.dtype), who + "'s " + slot.name));
    }
    return buffers;
  }

  Contender run_eager() {
    Contender c;
    c.name = "torch eager: " + ctx_.eager->call(workload_.op->name);
    try {
      if (ctx_.eager->call(workload_.op->name).empty()) throw StepFailure("no eager baseline for this op kind");
      std::vector<DevicePtr> results = scratch_outputs("torch");
      std::vector<ir::DataType> dtypes;
      for (const OutputSlot& slot : outputs()) dtypes.push_back(slot.dtype);
      Clock::time_point start = Clock::now();
      std::unique_ptr<EagerComputation> eager = buffers_->run_eager(*ctx_.eager, values_, results, dtypes);
      double first = std::chrono::duration<double>(Clock::now() - start).count();
      c.checks = check_outputs(results, nullptr);
      for (const OutputCheck& check : c.checks) eager_errors_.push_back(check.normalized_error);
      // The eager result is the computation our tolerance is calibrated on: its own error is
      // reported, not judged (an f64 twin of the same calls agrees with it by construction).
      for (OutputCheck& check : c.checks) check.ok = std::isfinite(check.normalized_error);
      c.time = time_call(
          [&]() -> Status {
            try {
              eager->run();
            } catch (const std::exception& e) {
              return DRAGON_RUNTIME_FAILURE("torch", e.what(), "");
            }
            return {};
          },
          ctx_.options->timer, first);
      c.status = "ok";
    } catch (const std::exception& e) {
      c.status = "failed";
      c.error = e.what();
    }
    return c;
  }

  std::optional<Contender> run_cublas() {
    std::string why_not;
    std::unique_ptr<CublasGemm> gemm = make_cublas_gemm(workload_, why_not);
    if (!gemm) return std::nullopt;  // not matmul-like: no row for it
    return run_library_baseline(gemm->name(), "cuBLAS", [&](const std::vector<DevicePtr>& params) {
      return gemm->run(params);
    });
  }

  std::optional<Contender> run_cudnn() {
    std::string why_not;
    std::unique_ptr<CudnnBaseline> cudnn;
    try {
      cudnn = make_cudnn_baseline(workload_, why_not);
    } catch (const std::exception& e) {
      Contender failed;
      failed.name = "cuDNN";
      failed.status = "failed";
      failed.error = e.what();
      return failed;
    }
    if (!cudnn) return std::nullopt;  // no convolution, pooling or softmax cuDNN can express: no row
    return run_library_baseline(cudnn->name(), "cuDNN", [&](const std::vector<DevicePtr>& params) {
      return cudnn->run(params);
    });
  }

  // A library call as a baseline (cuBLAS, cuDNN): run once into scratch outputs, checked
  // against the reference with the eager-calibrated tolerance, then timed. `run` gets every
  // parameter's device buffer, the outputs replaced by the scratch ones.
  Contender run_library_baseline(const std::string& name, const std::string& library,
                                 const std::function<Status(const std::vector<DevicePtr>&)>& run) {
    Contender c;
    c.name = name;
    try {
      std::vector<DevicePtr> results = scratch_outputs(library);
      std::vector<DevicePtr> params = device_params();
      for (size_t o = 0; o < outputs().size(); ++o) params[outputs()[o].param] = results[o];
      Clock::time_point start = Clock::now();
      or_fail(run(params), library);
      or_fail(ctx_.driver->synchronize(), library);
      double first = std::chrono::duration<double>(Clock::now() - start).count();
      c.checks = check_outputs(results, eager_errors_.empty() ? nullptr : &eager_errors_);
      c.status = all_ok(c.checks) ? "ok" : "incorrect";
      c.time = time_call([&] { return run(params); }, ctx_.options->timer, first);
    } catch (const std::exception& e) {
      c.status = "failed";
      c.error = e.what();
    }
    return c;
  }

  void run_ours(ProblemResult& r, const harness::PhysicsFloor& floor) {
    Contender& c = r.ours;
    try {
      // Unwritten elements show as NaN (floats) or garbage (ints) against the reference.
      for (const OutputSlot& slot : outputs()) {
        or_fail(ctx_.driver->fill_bytes(device_params()[slot.param], 0xff, static_cast<size_t>(slot.elements * element_bytes(slot.dtype))),
                "pre-filling outputs");
      }
      Clock::time_point start = Clock::now();
      or_fail(kernels_->launch(device_params()), "launching our kernels");
      or_fail(ctx_.driver->synchronize(), "running our kernels");
      double first = std::chrono::duration<double>(Clock::now() - start).count();
      std::vector<DevicePtr> results;
      for (const OutputSlot& slot : outputs()) results.push_back(device_params()[slot.param]);
      c.checks = check_outputs(results, eager_errors_.empty() ? nullptr : &eager_errors_);
      if (!all_ok(c.checks)) {
        c.status = "incorrect";
        for (const OutputCheck& check : c.checks) {
          if (!check.ok) c.error += fmt::format("{}: error {} above the tolerance {:.3g}; ", check.output, check.detail, check.tolerance);
        }
        return;  // an incorrect kernel's time means nothing
      }
      c.time = time_call([&] { return kernels_->launch(device_params()); }, ctx_.options->timer, first);
      if (harness::faster_than_physics(c.time->median_ms, floor)) {
        c.status = "impossible";
        c.error = fmt::format("{:.4f} ms is below the physics floor: {}", c.time->median_ms, floor.describe());
        return;
      }
      c.status = "ok";
    } catch (const std::exception& e) {
      c.status = "failed";
      c.error = e.what();
    }
  }

  // What buffers_ holds: every parameter's device buffer, and the outputs.
  const std::vector<DevicePtr>& device_params() const { return buffers_->params(); }
  const std::vector<OutputSlot>& outputs() const { return buffers_->outputs(); }

  Context& ctx_;
  const suites::Problem& problem_;
  ops::Workload workload_;
  std::unique_ptr<ProblemBuffers> buffers_;
  std::map<std::string, std::string> values_;
  std::unique_ptr<runtime::LoadedCudaFunction> kernels_;
  std::vector<double> eager_errors_;  // per output: libtorch's own error against f64
};

}  // namespace

Measured Measured::from(const harness::GpuTiming& timing) {
  return Measured{.median_ms = timing.median_ms,
                  .min_ms = timing.min_ms,
                  .max_ms = timing.max_ms,
                  .ci95_ms = timing.ci95_half_width_ms,
                  .calls = static_cast<int>(timing.samples_ms.size()),
                  .converged = timing.converged};
}

std::optional<double> ProblemResult::speedup_over(const Contender& baseline) const {
  if (ours.status != "ok" || baseline.status != "ok" || !ours.time || !baseline.time) return std::nullopt;
  return baseline.time->median_ms / ours.time->median_ms;
}

SuiteRun run_suite(const suites::Suite& suite, const SuiteRunOptions& options) {
  Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
  if (!driver.ok()) throw UserError("dragon bench needs a CUDA GPU: " + driver.error().describe());
  std::vector<suites::Problem> problems = suites::select_problems(suite, options.problems);

  SuiteRun run;
  run.suite = suite.name;
  run.command = options.command;
  run.commit = options.commit;
  run.started_at = options.started_at;
  run.device = driver.value()->device_name();
  run.gpu = harness::read_gpu_state();
  run.peaks = options.peaks;
  const EagerPlugin& plugin = eager_plugin();
  const EagerBaselines* eager = options.eager ? plugin.baselines : nullptr;
  if (eager && !eager->cuda_available()) {
    run.eager_library = eager->library() + ": no CUDA in this libtorch, eager baselines skipped";
    eager = nullptr;
  } else {
    run.eager_library = eager ? eager->library() : (options.eager ? "none: " + plugin.why_not : "off (--no-eager)");
  }

  DeviceFiller filler(driver.value());
  DeviceComparer comparer(driver.value());
  Context context{driver.value(), &filler, &comparer, eager, &options,
                  options.peaks ? floor_peaks(*options.peaks) : harness::DevicePeaks::h200_spec_sheet()};
  for (size_t i = 0; i < problems.size(); ++i) {
    if (options.on_start) options.on_start(i, problems.size(), problems[i]);
    run.problems.push_back(ProblemRunner(context, problems[i]).run());
    if (options.on_result) options.on_result(run.problems.back(), run);
  }
  return run;
}

}  // namespace dragon::bench
