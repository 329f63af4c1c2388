// Verification of tuning candidates against references computed once per task
// (task_verifier.h). Every comparison is the harness's: compare_output, the calibrated
// tolerance, the sentinel and garbage pre-fills.
#include "dragon/search/task_verifier.h"

#include <cstring>

#include <fmt/format.h>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/seed_sequence.h"

namespace dragon::search {
namespace {

bool is_output(const ir::Param& p) { return p.role != ir::ParamRole::kInput; }

MeasureStatus status_of(harness::RunStatus status) {
  switch (status) {
    case harness::RunStatus::kOk: return MeasureStatus::kOk;
    case harness::RunStatus::kFailed: return MeasureStatus::kRunFailed;
    case harness::RunStatus::kCrashed:
    case harness::RunStatus::kNoHandshake: return MeasureStatus::kCrashed;
    case harness::RunStatus::kTimedOut: return MeasureStatus::kTimedOut;
    // It returned, but changed memory beside its buffers: a wrong kernel, not a broken run.
    case harness::RunStatus::kWroteOutOfBounds: return MeasureStatus::kWrongResult;
  }
  return MeasureStatus::kRunFailed;
}

}  // namespace

TaskVerifier::TaskVerifier(ir::PrimFunc func, TaskVerifierOptions options)
    : func_(std::move(func)), options_(std::move(options)) {
  seed_ = options_.seed ? *options_.seed : harness::secret_seed();
  harness::Reference reference(func_, options_.reference);
  harness::SeedSequence seeds(seed_);
  for (interp::Distribution d : options_.distributions) {
    InputSet set;
    set.label = std::string(interp::distribution_name(d));
    set.args = interp::make_arguments(func_, seeds.next(), d);
    set.reference = reference.compute(set.args);
    for (size_t p = 0; p < set.args.size(); ++p) {
      if (func_->params[p].role == ir::ParamRole::kOutput) harness::fill_sentinel(set.args[p]);
    }
    sets_.push_back(std::move(set));
  }
}

std::vector<tensor::HostTensor> TaskVerifier::arguments(size_t index) const { return sets_.at(index).args; }

CheckResult TaskVerifier::judge(const InputSet& set, const std::vector<tensor::HostTensor>& args,
                                const std::vector<tensor::HostTensor>& prefill, std::string_view which) const {
  if (args.size() != set.args.size()) {
    return {MeasureStatus::kWrongResult, fmt::format("{} on the {} inputs: {} arguments came back, {} went in", which,
                                                     set.label, args.size(), set.args.size())};
  }
  size_t o = 0;
  for (size_t p = 0; p < args.size(); ++p) {
    const ir::Param& param = func_->params[p];
    if (args[p].dtype() != set.args[p].dtype() || args[p].shape() != set.args[p].shape()) {
      return {MeasureStatus::kWrongResult,
              fmt::format("{}: argument {} came back with another type or shape", which, param.buffer->name)};
    }
    if (!is_output(param)) {
      if (!harness::same_bits(args[p], set.args[p])) {
        return {MeasureStatus::kWrongResult,
                fmt::format("{} on the {} inputs: input {} changed during the run", which, set.label, param.buffer->name)};
      }
      continue;
    }
    const harness::ReferenceOutput& ref = set.reference.at(o++);
    const bool prefilled = param.role == ir::ParamRole::kOutput;
    harness::OutputComparison c =
        harness::compare_output(ref.native, ref.exact, args[p], ref.tolerance, prefilled ? &prefill[p] : nullptr);
    if (!c.ok()) {
      return {MeasureStatus::kWrongResult, fmt::format("{} on the {} inputs: output {}: {}", which, set.label,
                                                       ref.name, harness::describe(c, args[p].shape()))};
    }
  }
  return {};
}

CheckResult TaskVerifier::run_and_check(harness::Candidate& candidate, size_t index, bool garbage,
                                        std::vector<tensor::HostTensor>& args,
                                        const std::vector<tensor::HostTensor>* earlier) const {
  const InputSet& set = sets_.at(index);
  args = set.args;
  if (garbage) {
    for (size_t p = 0; p < args.size(); ++p) {
      if (func_->params[p].role == ir::ParamRole::kOutput) harness::fill_garbage(args[p], seed_ ^ (p + 1));
    }
  }
  std::vector<tensor::HostTensor> prefill = args;
  // Judged against garbage that never equals what the earlier run wrote there (a bf16
  // output meets such collisions by the dozen): those elements cannot show a skip.
  for (size_t p = 0; earlier != nullptr && p < args.size(); ++p) {
    if (func_->params[p].role == ir::ParamRole::kOutput) harness::keep_garbage_off(prefill[p], earlier->at(p));
  }
  const std::string which = garbage ? "the repeated run (garbage pre-filled)" : "the run";
  harness::RunOutcome outcome = candidate.run(args);
  if (!outcome.ok()) {
    return {status_of(outcome.status),
            fmt::format("{} on the {} inputs: {}: {}", which, set.label,
                        harness::run_status_name(outcome.status), outcome.reason)};
  }
  return judge(set, args, prefill, which);
}

CheckResult TaskVerifier::verify(harness::Candidate& candidate) const {
  std::vector<tensor::HostTensor> first;
  for (size_t i = 0; i < sets_.size(); ++i) {
    std::vector<tensor::HostTensor> args;
    if (CheckResult r = run_and_check(candidate, i, false, args); !r.ok()) return r;
    if (i == 0) first = std::move(args);
  }
  if (options_.check_determinism && !sets_.empty()) {
    std::vector<tensor::HostTensor> again;
    if (CheckResult r = run_and_check(candidate, 0, true, again, &first); !r.ok()) return r;
    for (size_t p = 0; p < again.size(); ++p) {
      if (is_output(func_->params[p]) && !harness::same_bits(again[p], first[p])) {
        return {MeasureStatus::kWrongResult,
                fmt::format("nondeterministic: two runs on the {} inputs wrote different {}", sets_[0].label,
                            func_->params[p].buffer->name)};
      }
    }
  }
  return {};
}

CheckResult TaskVerifier::check(size_t index, const std::vector<tensor::HostTensor>& args) const {
  const InputSet& set = sets_.at(index);
  // A timed call ran on outputs an earlier call wrote: nothing is "unwritten" to tell.
  return judge(set, args, set.args, "a timed call");
}

}  // namespace dragon::search
