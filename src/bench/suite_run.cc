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
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script_file.h"
#include "dragon/search/default_schedule.h"
#include "dragon/support/error.h"
#include "problem_buffers.h"
#include "problem_on_device.h"

namespace dragon::bench {

// The untuned default schedule (search/default_schedule.h): every nest bound, long
// reductions spread over threads.
ir::PrimFunc default_gpu_schedule(const ir::PrimFunc& func) {
  return search::default_schedule(func, lower::Target::cuda_h200()).func();
}

namespace {

using runtime::DevicePtr;
using Clock = std::chrono::steady_clock;

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
    harness::PhysicsFloor floor = harness::physics_floor(workload_.func, ctx_.floor_peaks);
    r.bytes = floor.bytes;
    r.flops = floor.flops;
    r.floor_ms = floor.floor_ms;
    r.compute_bound = floor.compute_bound;

    ir::PrimFunc scheduled;
    std::string script = find_script(ctx_.options->scripts_dir, problem_);
    try {
      if (!script.empty()) {
        scheduled = script::replay(workload_.func, script::load(script)).func();
        r.schedule = "script " + script;
      } else {
        scheduled = default_gpu_schedule(workload_.func);
        r.schedule = "default schedule";
      }
      r.ours.name = "ours (" + r.schedule + ")";
      kernels_ = build_kernels(scheduled);
    } catch (const std::exception& e) {
      r.ours.status = "failed";
      r.ours.error = std::string("build: ") + e.what();
      // The baselines still run: their times are worth having without ours.
    }
    std::unique_ptr<runtime::LoadedCudaFunction> tuned_kernels = build_tuned(r);

    problem_on_device_ = std::make_unique<ProblemOnDevice>(
        DeviceServices{ctx_.driver, ctx_.filler, ctx_.comparer, ctx_.eager}, workload_, ctx_.options->seed);
    r.reference = problem_on_device_->compute_reference();
    if (ctx_.eager && ctx_.options->eager) r.baselines.push_back(run_eager());
    if (ctx_.options->cublas) {
      if (std::optional<Contender> cublas = run_cublas(); cublas) r.baselines.push_back(std::move(*cublas));
    }
    if (ctx_.options->cudnn) {
      if (std::optional<Contender> cudnn = run_cudnn(); cudnn) r.baselines.push_back(std::move(*cudnn));
    }
    if (kernels_) run_scheduled(r.ours, *kernels_, floor);
    if (tuned_kernels) run_scheduled(*r.tuned, *tuned_kernels, floor);
  }

  // The tuned schedule's kernels (dragon bench --db), when the database has one; its row
  // says why it failed to build otherwise.
  std::unique_ptr<runtime::LoadedCudaFunction> build_tuned(ProblemResult& r) {
    if (!ctx_.options->tuned) return nullptr;
    std::optional<TunedSchedule> tuned;
    r.tuned.emplace();
    r.tuned->name = "tuned";
    try {
      tuned = ctx_.options->tuned(problem_, workload_.func);
      if (!tuned) {
        r.tuned.reset();
        return nullptr;
      }
      r.tuned->name = "tuned (" + tuned->description + ")";
      return build_kernels(tuned->scheduled);
    } catch (const std::exception& e) {
      r.tuned->status = "failed";
      r.tuned->error = std::string("build: ") + e.what();
      return nullptr;
    }
  }

  Contender run_eager() {
    Contender c;
    c.name = "torch eager: " + ctx_.eager->call(workload_.op->name);
    try {
      ProblemOnDevice::Eager eager = problem_on_device_->run_eager();
      c.checks = eager.checks;
      c.time = time_call(
          [&]() -> Status {
            try {
              eager.computation->run();
            } catch (const std::exception& e) {
              return DRAGON_RUNTIME_FAILURE("torch", e.what(), "");
            }
            return {};
          },
          ctx_.options->timer, eager.first_call_seconds);
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
      std::vector<DevicePtr> results = problem_on_device_->scratch_outputs(library);
      std::vector<DevicePtr> params = problem_on_device_->params();
      const std::vector<OutputSlot>& outputs = problem_on_device_->outputs();
      for (size_t o = 0; o < outputs.size(); ++o) params[outputs[o].param] = results[o];
      Clock::time_point start = Clock::now();
      or_fail(run(params), library);
      or_fail(ctx_.driver->synchronize(), library);
      double first = std::chrono::duration<double>(Clock::now() - start).count();
      c.checks = problem_on_device_->check_outputs(results);
      c.status = ProblemOnDevice::all_ok(c.checks) ? "ok" : "incorrect";
      c.time = time_call([&] { return run(params); }, ctx_.options->timer, first);
    } catch (const std::exception& e) {
      c.status = "failed";
      c.error = e.what();
    }
    return c;
  }

  // Our kernels (the default schedule, a script, or the tuned schedule): run once with the
  // outputs pre-filled, checked, and timed only when correct and not faster than physics.
  void run_scheduled(Contender& c, const runtime::LoadedCudaFunction& kernels, const harness::PhysicsFloor& floor) {
    try {
      const std::vector<DevicePtr>& params = problem_on_device_->params();
      // Unwritten elements show as NaN (floats) or garbage (ints) against the reference.
      problem_on_device_->prefill_outputs(0xff);
      Clock::time_point start = Clock::now();
      or_fail(kernels.launch(params), "launching our kernels");
      or_fail(ctx_.driver->synchronize(), "running our kernels");
      double first = std::chrono::duration<double>(Clock::now() - start).count();
      std::vector<DevicePtr> results;
      for (const OutputSlot& slot : problem_on_device_->outputs()) results.push_back(params[slot.param]);
      c.checks = problem_on_device_->check_outputs(results);
      if (!ProblemOnDevice::all_ok(c.checks)) {
        c.status = "incorrect";
        c.error = ProblemOnDevice::describe_failures(c.checks);
        return;  // an incorrect kernel's time means nothing
      }
      c.time = time_call([&] { return kernels.launch(params); }, ctx_.options->timer, first);
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

  Context& ctx_;
  const suites::Problem& problem_;
  ops::Workload workload_;
  std::unique_ptr<ProblemOnDevice> problem_on_device_;
  std::unique_ptr<runtime::LoadedCudaFunction> kernels_;
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
  return speedup_of(ours, baseline);
}

std::optional<double> ProblemResult::speedup_of(const Contender& contender, const Contender& baseline) {
  if (contender.status != "ok" || baseline.status != "ok" || !contender.time || !baseline.time) return std::nullopt;
  return baseline.time->median_ms / contender.time->median_ms;
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
