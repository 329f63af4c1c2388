// time_isolated_kernel (isolated_timing.h): the input sets, the timing job in a runner
// child, then, in this process only, the reference of each set, the check of every timed
// call's outputs and the physics floor. The references are computed after the child has
// exited: they never exist while the kernel runs.
#include "dragon/harness/isolated_timing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "child_process.h"
#include "child_verdict.h"
#include "dragon/harness/kernel_runner_protocol.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/support/error.h"
#include "handshake_nonce.h"
#include "runner_environment.h"
#include "shared_arguments.h"

namespace dragon::harness {
namespace {

using kernel_runner::ArgumentLayout;
using kernel_runner::ArgumentSlice;
using kernel_runner::Job;
using kernel_runner::JobKind;

void check_request(const IsolatedKernel& kernel, const TimingRequest& request) {
  if (kernel.language != KernelLanguage::kCuda) {
    throw UserError(fmt::format("timing {}: only CUDA kernels are timed (a GPU timer with CUDA events); {} is a CPU "
                                "kernel, and CPU timing is not offered",
                                kernel.source_name, kernel.source_name));
  }
  if (request.distributions.size() < 2) {
    throw UserError(fmt::format("timing {}: {} input set(s) given; at least two are needed, rotated across the timed "
                                "calls so that no call repeats the previous call's inputs",
                                kernel.source_name, request.distributions.size()));
  }
  const GpuTimerOptions& t = request.timer;
  if (t.warmup_calls < 0 || t.min_calls < 2 || t.max_calls < t.min_calls) {
    throw UserError(fmt::format("timing {}: timer calls out of range (warm-up {} >= 0, 2 <= min_calls {} <= "
                                "max_calls {}; two calls are the least that has a spread)",
                                kernel.source_name, t.warmup_calls, t.min_calls, t.max_calls));
  }
  if (!(t.max_seconds > 0) || !std::isfinite(t.max_seconds) || !(t.target_relative_ci > 0) ||
      !std::isfinite(t.target_relative_ci)) {
    throw UserError(fmt::format("timing {}: the timer's max_seconds ({}) and target_relative_ci ({}) must be "
                                "positive and finite",
                                kernel.source_name, t.max_seconds, t.target_relative_ci));
  }
  if (request.timeout.count() <= 0) {
    throw UserError(fmt::format("timing {}: the time limit of the timing run must be positive", kernel.source_name));
  }
}

// What one timed call's outputs take in the region (each slice aligned as the layout does).
uint64_t recorded_bytes_per_call(const std::vector<uint64_t>& recorded_bytes) {
  return kernel_runner::layout_slices(recorded_bytes).total_bytes;
}

int call_limit_for(const TimingRequest& request, uint64_t per_call, const std::string& kernel_name) {
  int64_t limit = request.timer.max_calls;
  if (per_call > 0) limit = std::min<int64_t>(limit, static_cast<int64_t>(request.recorded_output_budget_bytes / per_call));
  if (limit < request.timer.min_calls) {
    throw UserError(fmt::format(
        "timing {}: every timed call's outputs are kept for checking ({} bytes a call), and the budget of {} bytes "
        "holds {} calls, fewer than the timer's min_calls ({}); raise TimingRequest::recorded_output_budget_bytes to "
        "at least {} or lower min_calls",
        kernel_name, per_call, request.recorded_output_budget_bytes, limit, request.timer.min_calls,
        per_call * static_cast<uint64_t>(request.timer.min_calls)));
  }
  return static_cast<int>(limit);
}

IsolatedTiming run_failed(IsolatedTiming result, RunOutcome run) {
  result.outcome = TimingOutcome::kRunFailed;
  result.reason = fmt::format("{}: {}", run_status_name(run.status), run.reason);
  result.run = std::move(run);
  return result;
}

class TimingRun {
 public:
  TimingRun(const IsolatedKernel& kernel, const ir::PrimFunc& func, const TimingRequest& request)
      : kernel_(kernel), func_(func), request_(request), reference_(func, request.reference) {
    const std::vector<size_t>& written = reference_.output_params();
    if (written.empty()) {
      throw UserError(fmt::format("timing {}: {} has no outputs to check", kernel.source_name, func->name));
    }
    for (size_t p : written) {
      recorded_params_.push_back(p);
      recorded_bytes_.push_back(static_cast<uint64_t>(param_bytes(func->params[p])));
    }
    result_.call_limit = call_limit_for(request, recorded_bytes_per_call(recorded_bytes_), kernel.source_name);
    result_.seed = request.seed.has_value() ? *request.seed : secret_seed();
    result_.peaks_source = request.peaks.source;
    result_.floor = physics_floor(func, request.peaks);
  }

  IsolatedTiming run() {
    make_input_sets();
    Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel_, request_.isolation);
    if (!compiled) {
      return run_failed(std::move(result_),
                        RunOutcome::failure(RunStatus::kFailed, "compiling " + kernel_.source_name + ": " +
                                                                    compiled.error().describe()));
    }
    isolation::SharedArguments region = isolation::SharedArguments::create(region_layout()).value();
    for (size_t s = 0; s < sets_.size(); ++s) {
      for (size_t p = 0; p < params(); ++p) region.write(s * params() + p, sets_[s][p]);
    }
    Job job = timing_job(compiled.value(), region.layout());
    isolation::ChildRequest child_request{find_kernel_runner(request_.isolation).value(),
                                          kernel_runner::encode_job(job),
                                          region.fd(),
                                          isolation::runner_environment(JobKind::kTimeCuda),
                                          request_.timeout,
                                          request_.isolation.output_limit,
                                          request_.isolation.hide_parent_memory};
    isolation::ChildRun child = isolation::run_child(child_request).value();
    RunOutcome outcome = isolation::judge_child(child, job.nonce, request_.timeout);
    if (!outcome.ok()) return run_failed(std::move(result_), std::move(outcome));
    kernel_runner::Reply reply = *kernel_runner::decode_reply(child.reply);  // judge_child found it well-formed
    if (std::string problem = samples_problem(reply.samples_ms); !problem.empty()) {
      return run_failed(std::move(result_), RunOutcome::failure(RunStatus::kFailed, problem));
    }
    result_.run = RunOutcome::success();
    result_.gpu_state = reply.gpu_state;
    result_.timing = summarize_samples(std::move(reply.samples_ms));
    result_.timing.converged = timing_converged(result_.timing, job.timer);
    check_every_call(region);
    judge();
    return std::move(result_);
  }

 private:
  static int64_t param_bytes(const ir::Param& param) {
    int64_t bytes = param.buffer->dtype.bytes();
    for (int64_t extent : param.buffer->shape) bytes *= extent;
    return bytes;
  }

  size_t params() const { return func_->params.size(); }
  size_t set_count() const { return sets_.size(); }

  // K sets from the request's distributions and secret seeds; outputs pre-filled with the
  // sentinel, which a call that skips an element leaves in place.
  void make_input_sets() {
    SeedSequence seeds(result_.seed);
    for (interp::Distribution d : request_.distributions) {
      std::vector<tensor::HostTensor> args = interp::make_arguments(func_, seeds.next(), d);
      for (size_t p = 0; p < args.size(); ++p) {
        if (func_->params[p].role == ir::ParamRole::kOutput) fill_sentinel(args[p]);
      }
      sets_.push_back(std::move(args));
      result_.input_sets.emplace_back(interp::distribution_name(d));
    }
  }

  // The K sets (set-major), then one slot per timed call and recorded parameter.
  ArgumentLayout region_layout() const {
    std::vector<uint64_t> bytes;
    for (const std::vector<tensor::HostTensor>& set : sets_) {
      for (const tensor::HostTensor& t : set) bytes.push_back(static_cast<uint64_t>(t.size_bytes()));
    }
    for (int c = 0; c < result_.call_limit; ++c) bytes.insert(bytes.end(), recorded_bytes_.begin(), recorded_bytes_.end());
    return kernel_runner::layout_slices(bytes);
  }

  Job timing_job(const CompiledKernel& compiled, const ArgumentLayout& layout) const {
    Job job;
    job.kind = JobKind::kTimeCuda;
    job.nonce = isolation::fresh_handshake_nonce();
    job.entry = compiled.entry;
    job.cubin = compiled.cubin;
    job.grid = compiled.grid;
    job.block = compiled.block;
    job.dynamic_shared_bytes = compiled.dynamic_shared_bytes;
    const size_t set_slices = set_count() * params();
    job.arguments.assign(layout.slices.begin(), layout.slices.begin() + static_cast<std::ptrdiff_t>(set_slices));
    job.call_slots.assign(layout.slices.begin() + static_cast<std::ptrdiff_t>(set_slices), layout.slices.end());
    job.region_bytes = layout.total_bytes;
    job.input_sets = set_count();
    job.recorded_params.assign(recorded_params_.begin(), recorded_params_.end());
    job.timer = request_.timer;
    job.timer.max_calls = result_.call_limit;
    if (std::string problem = kernel_runner::timing_job_problem(job); !problem.empty()) {
      throw RuntimeError(DRAGON_RUNTIME_FAILURE("time_isolated_kernel", "inconsistent timing job: " + problem, ""));
    }
    return job;
  }

  // The runner's samples must be one per recorded call, and times.
  std::string samples_problem(const std::vector<double>& samples) const {
    if (samples.empty() || samples.size() > static_cast<size_t>(result_.call_limit)) {
      return fmt::format("the runner reported {} timed calls; between 1 and {} were possible", samples.size(),
                         result_.call_limit);
    }
    for (double ms : samples) {
      if (!std::isfinite(ms) || ms < 0) return fmt::format("the runner reported a time of {} ms", ms);
    }
    return "";
  }

  // Every timed call's recorded outputs against the reference of its set.
  void check_every_call(const isolation::SharedArguments& region) {
    std::vector<std::vector<ReferenceOutput>> references;
    for (const std::vector<tensor::HostTensor>& set : sets_) references.push_back(reference_.compute(set));
    const size_t first_slot = set_count() * params();
    const size_t recorded = recorded_params_.size();
    for (size_t c = 0; c < result_.timing.samples_ms.size(); ++c) {
      const size_t s = kernel_runner::timed_input_set(c, set_count());
      CallCheck check{static_cast<int>(c), static_cast<int>(s), true, 0, ""};
      for (size_t r = 0; r < recorded; ++r) {
        const size_t p = recorded_params_[r];
        const ReferenceOutput& ref = references[s][r];
        tensor::HostTensor actual = sets_[s][p];  // shaped and typed; overwritten from the slot
        region.read(first_slot + c * recorded + r, actual);
        const bool prefilled = func_->params[p].role == ir::ParamRole::kOutput;
        OutputComparison comparison =
            compare_output(ref.native, ref.exact, actual, ref.tolerance, prefilled ? &sets_[s][p] : nullptr);
        check.normalized_error = std::max(check.normalized_error, comparison.normalized_error);
        if (comparison.ok()) continue;
        check.ok = false;
        if (!check.problem.empty()) check.problem += "; ";
        check.problem += fmt::format("output {}: {}", ref.name, describe(comparison, actual.shape()));
      }
      if (!check.ok && result_.first_wrong_call < 0) result_.first_wrong_call = static_cast<int>(c);
      result_.calls.push_back(std::move(check));
    }
  }

  void judge() {
    const GpuTiming& t = result_.timing;
    for (double ms : t.samples_ms) result_.calls_below_floor += faster_than_physics(ms, result_.floor) ? 1 : 0;
    if (result_.first_wrong_call >= 0) {
      const CallCheck& wrong = result_.calls[static_cast<size_t>(result_.first_wrong_call)];
      int wrong_calls = 0;
      for (const CallCheck& c : result_.calls) wrong_calls += c.ok ? 0 : 1;
      result_.outcome = TimingOutcome::kWrongOutput;
      result_.reason = fmt::format("timed call {} (input set {}, {}) wrote wrong outputs; {} of {} timed calls did: {}",
                                   wrong.call, wrong.input_set, result_.input_sets[static_cast<size_t>(wrong.input_set)],
                                   wrong_calls, result_.calls.size(), wrong.problem);
    } else if (result_.calls_below_floor > 0) {
      result_.outcome = TimingOutcome::kImpossiblyFast;
      result_.reason = fmt::format(
          "{} of {} timed calls took less than the physics floor ({}, {}): fastest {:.4g} ms, median {:.4g} ms; "
          "correct outputs that fast were not computed on those calls",
          result_.calls_below_floor, t.samples_ms.size(), result_.floor.describe(), result_.peaks_source, t.min_ms,
          t.median_ms);
    } else {
      result_.outcome = TimingOutcome::kOk;
    }
  }

  const IsolatedKernel& kernel_;
  const ir::PrimFunc& func_;
  const TimingRequest& request_;
  Reference reference_;
  std::vector<uint64_t> recorded_params_;
  std::vector<uint64_t> recorded_bytes_;
  std::vector<std::vector<tensor::HostTensor>> sets_;
  IsolatedTiming result_;
};

}  // namespace

std::string_view timing_outcome_name(TimingOutcome outcome) {
  switch (outcome) {
    case TimingOutcome::kOk: return "ok";
    case TimingOutcome::kWrongOutput: return "wrong output";
    case TimingOutcome::kImpossiblyFast: return "impossibly fast";
    case TimingOutcome::kRunFailed: return "run failed";
  }
  return "unknown";
}

std::string_view timing_outcome_id(TimingOutcome outcome) {
  switch (outcome) {
    case TimingOutcome::kOk: return "ok";
    case TimingOutcome::kWrongOutput: return "wrong_output";
    case TimingOutcome::kImpossiblyFast: return "impossibly_fast";
    case TimingOutcome::kRunFailed: return "run_failed";
  }
  return "unknown";
}

std::string IsolatedTiming::describe() const {
  std::string text = ok() ? "OK " + timing.describe()
                          : fmt::format("REJECTED ({}): {}", timing_outcome_name(outcome), reason);
  if (run.ok()) {
    double worst = 0;
    for (const CallCheck& c : calls) worst = std::max(worst, c.normalized_error);
    text += fmt::format(
        "\n  calls: {} timed (limit {}) on {} input sets ({}) rotated over {} buffer groups, reset before every "
        "call; every call's outputs checked (largest normalized error {:.3g})",
        calls.size(), call_limit, input_sets.size(), fmt::join(input_sets, ", "), input_sets.size() + 1, worst);
    text += "\n  GPU: " + gpu_state.describe();
  }
  text += fmt::format("\n  physics: {} ({})", floor.describe(), peaks_source);
  if (run.ok() && floor.floor_ms > 0) {
    text += fmt::format("; the median is {:.3g}x the floor", timing.median_ms / floor.floor_ms);
  }
  return text;
}

IsolatedTiming time_isolated_kernel(const IsolatedKernel& kernel, const ir::PrimFunc& reference,
                                    const TimingRequest& request) {
  check_request(kernel, request);
  return TimingRun(kernel, reference, request).run();
}

}  // namespace dragon::harness
