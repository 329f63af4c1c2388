// TimingRun (timing_run.h): variants, region and job before; references, every call's
// check, red zones and the physics floor after. Also the timing's inputs and its rendering.
#include "timing_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/support/error.h"
#include "handshake_nonce.h"

namespace dragon::harness {

TimingInputs draw_timing_inputs(const ir::PrimFunc& func, const TimingRequest& request) {
  TimingInputs inputs;
  inputs.seed = request.seed.has_value() ? *request.seed : secret_seed();
  SeedSequence seeds(inputs.seed);
  for (interp::Distribution d : request.distributions) {
    std::vector<tensor::HostTensor> args = interp::make_arguments(func, seeds.next(), d);
    for (size_t p = 0; p < args.size(); ++p) {
      if (func->params[p].role == ir::ParamRole::kOutput) fill_sentinel(args[p]);
    }
    inputs.variant_bases.push_back(inputs.sets.size());
    inputs.sets.push_back(std::move(args));
    inputs.labels.emplace_back(interp::distribution_name(d));
  }
  const std::vector<std::string> set_labels = inputs.labels;
  inputs.siblings = make_siblings(func, inputs.sets, set_labels, seeds.next(),
                                  request.siblings_per_set * static_cast<int>(inputs.sets.size()));
  // A lone sibling (the others' inputs admitting no change) would make K + 1 variants, as
  // many as the buffer groups: a group would hold one variant twice in a row.
  if (inputs.siblings.size() == 1) inputs.siblings.clear();
  for (const InputSibling& sibling : inputs.siblings) {
    inputs.variant_bases.push_back(sibling.base);
    inputs.labels.push_back(sibling.label);
  }
  return inputs;
}

void compute_timing_references(TimingInputs& inputs, const Reference& reference) {
  if (inputs.references.size() == inputs.variant_bases.size()) return;
  inputs.references.clear();
  const size_t sets = inputs.sets.size();
  for (size_t v = 0; v < inputs.variant_bases.size(); ++v) {
    if (v < sets) {
      inputs.references.push_back(reference.compute(inputs.sets[v]));
      continue;
    }
    std::vector<tensor::HostTensor> args = inputs.sets[inputs.variant_bases[v]];
    apply_sibling(inputs.siblings[v - sets], args);
    inputs.references.push_back(reference.compute(args));
  }
}

std::string_view timing_outcome_name(TimingOutcome outcome) {
  switch (outcome) {
    case TimingOutcome::kOk: return "ok";
    case TimingOutcome::kWrongOutput: return "wrong output";
    case TimingOutcome::kImpossiblyFast: return "impossibly fast";
    case TimingOutcome::kRunFailed: return "run failed";
    case TimingOutcome::kOutOfBoundsWrite: return "out-of-bounds write";
  }
  return "unknown";
}

std::string_view timing_outcome_id(TimingOutcome outcome) {
  switch (outcome) {
    case TimingOutcome::kOk: return "ok";
    case TimingOutcome::kWrongOutput: return "wrong_output";
    case TimingOutcome::kImpossiblyFast: return "impossibly_fast";
    case TimingOutcome::kRunFailed: return "run_failed";
    case TimingOutcome::kOutOfBoundsWrite: return "out_of_bounds_write";
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
        "\n  calls: {} timed (limit {}) on {} input sets ({}) and {} siblings of them, rotated over {} buffer groups "
        "in red zones, reset before every call; every call's outputs checked (largest normalized error {:.3g})",
        calls.size(), call_limit, input_sets.size(), fmt::join(input_sets, ", "), variants.size() - input_sets.size(),
        input_sets.size() + 1, worst);
    text += "\n  GPU: " + gpu_state.describe();
  }
  text += fmt::format("\n  physics: {} ({})", floor.describe(), peaks_source);
  if (run.ok() && floor.floor_ms > 0) {
    text += fmt::format("; the median is {:.3g}x the floor", timing.median_ms / floor.floor_ms);
  }
  return text;
}

namespace isolation {
namespace {

using kernel_runner::ArgumentLayout;
using kernel_runner::Job;
using kernel_runner::JobKind;

int64_t param_bytes(const ir::Param& param) {
  int64_t bytes = param.buffer->dtype.bytes();
  for (int64_t extent : param.buffer->shape) bytes *= extent;
  return bytes;
}

int call_limit_for(const TimingRequest& request, uint64_t per_call, const std::string& name) {
  int64_t limit = request.timer.max_calls;
  if (per_call > 0) limit = std::min<int64_t>(limit, static_cast<int64_t>(request.recorded_output_budget_bytes / per_call));
  if (limit < request.timer.min_calls) {
    throw UserError(fmt::format(
        "timing {}: every timed call's outputs are kept for checking ({} bytes a call), and the budget of {} bytes "
        "holds {} calls, fewer than the timer's min_calls ({}); raise TimingRequest::recorded_output_budget_bytes to "
        "at least {} or lower min_calls",
        name, per_call, request.recorded_output_budget_bytes, limit, request.timer.min_calls,
        per_call * static_cast<uint64_t>(request.timer.min_calls)));
  }
  return static_cast<int>(limit);
}

// One element of `param`'s type holding `value`, as the bits a patch writes.
kernel_runner::ElementPatch patch_of(const ir::PrimFunc& func, uint64_t variant, const ElementChange& change) {
  tensor::HostTensor element(func->params[change.param].buffer->dtype, {1});
  element.set(0, change.value);
  kernel_runner::ElementPatch patch;
  patch.variant = variant;
  patch.param = change.param;
  patch.bytes = static_cast<uint32_t>(element.size_bytes());
  patch.byte_offset = static_cast<uint64_t>(change.index) * patch.bytes;
  std::memcpy(&patch.bits, element.data(), patch.bytes);
  return patch;
}

}  // namespace

void check_timing_request(const TimingRequest& request, const std::string& name) {
  if (request.distributions.size() < 2) {
    throw UserError(fmt::format("timing {}: {} input set(s) given; at least two are needed, rotated across the timed "
                                "calls so that no call repeats the previous call's inputs",
                                name, request.distributions.size()));
  }
  if (request.siblings_per_set < 0) throw UserError(fmt::format("timing {}: siblings_per_set must be >= 0", name));
  const GpuTimerOptions& t = request.timer;
  if (t.warmup_calls < 0 || t.min_calls < 2 || t.max_calls < t.min_calls) {
    throw UserError(fmt::format("timing {}: timer calls out of range (warm-up {} >= 0, 2 <= min_calls {} <= "
                                "max_calls {}; two calls are the least that has a spread)",
                                name, t.warmup_calls, t.min_calls, t.max_calls));
  }
  if (!(t.max_seconds > 0) || !std::isfinite(t.max_seconds) || !(t.target_relative_ci > 0) ||
      !std::isfinite(t.target_relative_ci)) {
    throw UserError(fmt::format("timing {}: the timer's max_seconds ({}) and target_relative_ci ({}) must be "
                                "positive and finite",
                                name, t.max_seconds, t.target_relative_ci));
  }
  if (request.timeout.count() <= 0) {
    throw UserError(fmt::format("timing {}: the time limit of the timing run must be positive", name));
  }
}

TimingRun::TimingRun(const Reference& reference, const TimingRequest& request, TimingInputs* inputs, std::string name)
    : reference_(reference), request_(request), name_(std::move(name)), inputs_(inputs) {
  const ir::PrimFunc& func = reference.func();
  const std::vector<size_t>& written = reference_.output_params();
  if (written.empty()) throw UserError(fmt::format("timing {}: {} has no outputs to check", name_, func->name));
  for (size_t p : written) {
    recorded_params_.push_back(p);
    recorded_bytes_.push_back(static_cast<uint64_t>(param_bytes(func->params[p])));
  }
  result_.call_limit =
      call_limit_for(request, kernel_runner::layout_slices(recorded_bytes_).total_bytes, name_);
  if (inputs_ == nullptr) {
    own_inputs_ = draw_timing_inputs(func, request);
    inputs_ = &own_inputs_;
  }
  if (inputs_->sets.size() != request.distributions.size()) {
    throw UserError(fmt::format("timing {}: the inputs drawn hold {} sets, the request asks for {}", name_,
                                inputs_->sets.size(), request.distributions.size()));
  }
  result_.seed = inputs_->seed;
  result_.input_sets.assign(inputs_->labels.begin(),
                            inputs_->labels.begin() + static_cast<std::ptrdiff_t>(inputs_->sets.size()));
  result_.variants = inputs_->labels;
  result_.peaks_source = request.peaks.source;
  result_.floor = physics_floor(func, request.peaks);
}

IsolatedTiming TimingRun::run(const TimingExecutor& execute) {
  // The K sets (set-major), then one slot per timed call and recorded parameter.
  std::vector<uint64_t> bytes;
  for (const std::vector<tensor::HostTensor>& set : inputs_->sets) {
    for (const tensor::HostTensor& t : set) bytes.push_back(static_cast<uint64_t>(t.size_bytes()));
  }
  for (int c = 0; c < result_.call_limit; ++c) bytes.insert(bytes.end(), recorded_bytes_.begin(), recorded_bytes_.end());
  SharedArguments region = SharedArguments::create(kernel_runner::layout_slices(bytes)).value();
  for (size_t s = 0; s < inputs_->sets.size(); ++s) {
    for (size_t p = 0; p < params(); ++p) region.write(s * params() + p, inputs_->sets[s][p]);
  }
  Job job = timing_job(region.layout());
  TimingExecution execution = execute(job, region);
  auto failed = [this](RunOutcome run) {
    result_.outcome = TimingOutcome::kRunFailed;
    result_.reason = fmt::format("{}: {}", run_status_name(run.status), run.reason);
    result_.run = std::move(run);
    return std::move(result_);
  };
  if (!execution.outcome.ok()) return failed(std::move(execution.outcome));
  if (std::string problem = samples_problem(execution.samples_ms); !problem.empty()) {
    return failed(RunOutcome::failure(RunStatus::kFailed, problem));
  }
  result_.run = RunOutcome::success();
  result_.gpu_state = execution.gpu_state;
  result_.red_zone_violations = std::move(execution.red_zone_violations);
  result_.timing = summarize_samples(std::move(execution.samples_ms));
  result_.timing.converged = timing_converged(result_.timing, job.timer);
  // The references, unless the caller drew the inputs, are computed only now: they never
  // exist while the kernel runs.
  compute_timing_references(*inputs_, reference_);
  check_every_call(region);
  judge();
  return std::move(result_);
}

Job TimingRun::timing_job(const ArgumentLayout& layout) const {
  Job job;
  job.kind = JobKind::kTimeCuda;
  job.nonce = fresh_handshake_nonce();
  const size_t set_slices = inputs_->sets.size() * params();
  job.arguments.assign(layout.slices.begin(), layout.slices.begin() + static_cast<std::ptrdiff_t>(set_slices));
  job.call_slots.assign(layout.slices.begin() + static_cast<std::ptrdiff_t>(set_slices), layout.slices.end());
  job.region_bytes = layout.total_bytes;
  job.input_sets = inputs_->sets.size();
  job.variant_bases.assign(inputs_->variant_bases.begin(), inputs_->variant_bases.end());
  const size_t sets = inputs_->sets.size();
  for (size_t s = 0; s < inputs_->siblings.size(); ++s) {
    for (const ElementChange& change : inputs_->siblings[s].changes) {
      job.patches.push_back(patch_of(reference_.func(), sets + s, change));
    }
  }
  job.red_zones = !request_.red_zones       ? RedZones::kNone
                  : request_.page_end_groups ? RedZones::kPageEnd
                                             : RedZones::kGuards;
  job.recorded_params.assign(recorded_params_.begin(), recorded_params_.end());
  job.timer = request_.timer;
  job.timer.max_calls = result_.call_limit;
  if (std::string problem = kernel_runner::job_problem(job); !problem.empty()) {
    throw RuntimeError(DRAGON_RUNTIME_FAILURE("TimingRun", "inconsistent timing job: " + problem, ""));
  }
  return job;
}

// The samples must be one per recorded call, and times.
std::string TimingRun::samples_problem(const std::vector<double>& samples) const {
  if (samples.empty() || samples.size() > static_cast<size_t>(result_.call_limit)) {
    return fmt::format("the timing reported {} timed calls; between 1 and {} were possible", samples.size(),
                       result_.call_limit);
  }
  for (double ms : samples) {
    if (!std::isfinite(ms) || ms < 0) return fmt::format("the timing reported a time of {} ms", ms);
  }
  return "";
}

// Every timed call's recorded outputs against the reference of its variant.
void TimingRun::check_every_call(const SharedArguments& region) {
  const size_t first_slot = inputs_->sets.size() * params();
  const size_t recorded = recorded_params_.size();
  const uint64_t variants = inputs_->variant_bases.size();
  for (size_t c = 0; c < result_.timing.samples_ms.size(); ++c) {
    const size_t v = kernel_runner::timed_variant(c, variants);
    const std::vector<tensor::HostTensor>& base = inputs_->sets[inputs_->variant_bases[v]];
    CallCheck check{static_cast<int>(c), static_cast<int>(v), true, 0, ""};
    for (size_t r = 0; r < recorded; ++r) {
      const size_t p = recorded_params_[r];
      const ReferenceOutput& ref = inputs_->references[v][r];
      tensor::HostTensor actual = base[p];  // shaped and typed; overwritten from the slot
      region.read(first_slot + c * recorded + r, actual);
      const bool prefilled = reference_.func()->params[p].role == ir::ParamRole::kOutput;
      OutputComparison comparison =
          compare_output(ref.native, ref.exact, actual, ref.tolerance, prefilled ? &base[p] : nullptr);
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

void TimingRun::judge() {
  const GpuTiming& t = result_.timing;
  for (double ms : t.samples_ms) result_.calls_below_floor += faster_than_physics(ms, result_.floor) ? 1 : 0;
  if (!result_.red_zone_violations.empty()) {
    result_.outcome = TimingOutcome::kOutOfBoundsWrite;
    result_.reason = "timed calls wrote outside their buffers: " + result_.red_zone_violations;
  } else if (result_.first_wrong_call >= 0) {
    const CallCheck& wrong = result_.calls[static_cast<size_t>(result_.first_wrong_call)];
    int wrong_calls = 0;
    for (const CallCheck& c : result_.calls) wrong_calls += c.ok ? 0 : 1;
    result_.outcome = TimingOutcome::kWrongOutput;
    result_.reason = fmt::format("timed call {} (variant {}: {}) wrote wrong outputs; {} of {} timed calls did: {}",
                                 wrong.call, wrong.variant, result_.variants[static_cast<size_t>(wrong.variant)],
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

}  // namespace isolation
}  // namespace dragon::harness
