// The verification protocol: input sets, the runs of the candidate on each, and the checks
// of every run. The order of runs per input set is: the sentinel run, then (optionally)
// the same inputs again with garbage pre-filled.
#include "dragon/harness/verify.h"

#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/harness/trivial_outputs.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

struct InputSet {
  std::string label;
  interp::Distribution distribution = interp::Distribution::kNormal;
  uint64_t seed = 0;
  std::vector<tensor::HostTensor> args;  // pristine: inputs filled, outputs as make_arguments leaves them
};

FailureKind failure_of(RunStatus status) {
  switch (status) {
    case RunStatus::kFailed: return FailureKind::kFailed;
    case RunStatus::kCrashed: return FailureKind::kCrashed;
    case RunStatus::kTimedOut: return FailureKind::kTimedOut;
    case RunStatus::kNoHandshake: return FailureKind::kNoHandshake;
    case RunStatus::kOk: break;
  }
  DRAGON_UNREACHABLE("no failure for a run that ended normally");
}

// FNV-1a over the bytes: a fingerprint of an input, taken before and after each run.
uint64_t fingerprint(const tensor::HostTensor& t) {
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = static_cast<const uint8_t*>(t.data());
  for (int64_t i = 0; i < t.size_bytes(); ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

bool is_perturbable(const ir::Param& param) {
  return param.role == ir::ParamRole::kInput && param.buffer->dtype.is_float() &&
         (param.domain.kind == ir::ValueDomain::Kind::kReal || param.domain.kind == ir::ValueDomain::Kind::kPositive);
}

// A copy of `base` with one random element of one random real-valued input moved up (so
// positive domains stay positive) by enough to survive rounding to any float type. One
// element only: a cache keyed on part of the input misses the change unless that element
// falls in its key.
std::optional<InputSet> perturbed(const ir::PrimFunc& func, const InputSet& base, uint64_t seed) {
  std::vector<size_t> candidates;
  for (size_t p = 0; p < func->params.size(); ++p) {
    if (is_perturbable(func->params[p]) && base.args[p].num_elements() > 0) candidates.push_back(p);
  }
  if (candidates.empty()) return std::nullopt;
  InputSet set{base.label + ", one element changed", base.distribution, seed, base.args};
  SeedSequence random(seed);
  tensor::HostTensor& t = set.args[candidates[random.below(candidates.size())]];
  int64_t index = static_cast<int64_t>(random.below(static_cast<uint64_t>(t.num_elements())));
  double value = t.get(index);
  t.set(index, value + 1 + std::fabs(value) / 2);
  return set;
}

class Verification {
 public:
  Verification(const Reference& reference, Candidate& candidate, const VerifyOptions& options)
      : reference_(reference), func_(reference.func()), candidate_(candidate), options_(options) {
    verdict_.candidate = candidate.name();
    verdict_.function = func_->name;
    verdict_.seed = options.seed.has_value() ? *options.seed : secret_seed();
  }

  Verdict run() {
    std::vector<InputSet> sets = make_input_sets();
    for (const InputSet& set : sets) judge(set);
    if (options_.audit_trivial_outputs) {
      for (const auto& [name, passes] : trivial_passes_) {
        if (passes) verdict_.weak_because.push_back(name);
      }
    }
    verdict_.passed = verdict_.failures.empty();
    return std::move(verdict_);
  }

 private:
  struct Seen {
    std::string label;
    std::vector<tensor::HostTensor> outputs;  // the candidate's, from the sentinel run
    std::vector<ReferenceOutput> reference;
  };

  std::vector<InputSet> make_input_sets() {
    SeedSequence seeds(verdict_.seed);
    std::vector<InputSet> sets;
    for (interp::Distribution d : options_.distributions) {
      uint64_t seed = seeds.next();
      sets.push_back({std::string(interp::distribution_name(d)), d, seed, interp::make_arguments(func_, seed, d)});
    }
    size_t bases = std::min<size_t>(sets.size(), 2);
    for (size_t b = 0; b < bases; ++b) {
      uint64_t perturbation_seed = seeds.next();
      if (!options_.check_perturbed_inputs) continue;
      if (std::optional<InputSet> p = perturbed(func_, sets[b], perturbation_seed)) sets.push_back(std::move(*p));
    }
    calibration_seed_ = seeds.next();
    garbage_seed_ = seeds.next();
    return sets;
  }

  void fail(FailureKind kind, const std::string& set, std::string message) {
    verdict_.failures.push_back({kind, set, std::move(message)});
  }

  const std::string& param_name(size_t p) const { return func_->params[p].buffer->name; }

  // Refills the candidate's buffers in place (the same addresses every run: a cache keyed
  // on pointers returns stale results) with `set`'s inputs; outputs get the pre-fill.
  void load(const InputSet& set, bool sentinel) {
    if (args_.size() != set.args.size()) args_ = set.args;
    for (size_t p = 0; p < args_.size(); ++p) {
      tensor::HostTensor& arg = args_[p];
      if (arg.dtype() != set.args[p].dtype() || arg.shape() != set.args[p].shape()) arg = set.args[p];
      if (func_->params[p].role == ir::ParamRole::kOutput) {
        if (sentinel) {
          fill_sentinel(arg);
        } else {
          fill_garbage(arg, garbage_seed_ ^ (set.seed + p));
        }
      } else {
        std::memcpy(arg.data(), set.args[p].data(), static_cast<size_t>(arg.size_bytes()));
      }
    }
  }

  // One run of the candidate on `set` as loaded. False if it did not end normally or
  // left its arguments unusable; the failures are recorded.
  bool run_once(const InputSet& set, std::string_view which) {
    std::vector<uint64_t> before;
    for (size_t p = 0; p < args_.size(); ++p) before.push_back(fingerprint(args_[p]));
    RunOutcome outcome = candidate_.run(args_);
    if (!outcome.ok()) {
      fail(failure_of(outcome.status), set.label, fmt::format("{}: {}", which, outcome.reason));
      return false;
    }
    if (args_.size() != set.args.size()) {
      fail(FailureKind::kArgumentsAltered, set.label,
           fmt::format("{}: {} argument tensors after the run, {} before", which, args_.size(), set.args.size()));
      args_.clear();
      return false;
    }
    bool usable = true;
    for (size_t p = 0; p < args_.size(); ++p) {
      const tensor::HostTensor& arg = args_[p];
      if (arg.dtype() != set.args[p].dtype() || arg.shape() != set.args[p].shape()) {
        fail(FailureKind::kArgumentsAltered, set.label,
             fmt::format("{}: argument {} was replaced by a tensor of another type or shape", which, param_name(p)));
        usable = false;
        continue;
      }
      if (func_->params[p].role != ir::ParamRole::kInput || fingerprint(arg) == before[p]) continue;
      int64_t changed = 0, first = -1;
      for (int64_t i = 0; i < arg.num_elements(); ++i) {
        if (same_bits(arg, set.args[p], i)) continue;
        if (first < 0) first = i;
        ++changed;
      }
      fail(FailureKind::kInputMutated, set.label,
           fmt::format("{}: input {} changed during the run ({} of {} elements; first {} was {:.9g}, now {:.9g})",
                       which, param_name(p), changed, arg.num_elements(), format_index(arg.shape(), first),
                       set.args[p].get(first), arg.get(first)));
    }
    if (!usable) args_.clear();
    return usable;
  }

  // Failures of one output of one run, one per class of bad element.
  void report(const OutputComparison& c, const std::string& set, const std::string& output,
              const std::vector<int64_t>& shape, std::string_view which) {
    if (c.ok()) return;
    std::string detail = fmt::format("{}: output {}: {}", which, output, describe(c, shape));
    if (c.unwritten > 0) fail(FailureKind::kUnwrittenOutput, set, detail);
    if (c.non_finite > 0) fail(FailureKind::kNanOrInf, set, detail);
    if (c.wrong > 0) fail(FailureKind::kWrongValues, set, detail);
  }

  void judge(const InputSet& set) {
    InputSetReport report_entry{set.label, std::string(interp::distribution_name(set.distribution)), set.seed, false,
                                {}};
    std::vector<ReferenceOutput> reference = reference_.compute(set.args);
    if (options_.audit_trivial_outputs) audit_trivial_outputs(set, reference);

    const std::vector<size_t>& written = reference_.output_params();
    load(set, /*sentinel=*/true);
    std::vector<tensor::HostTensor> sentinels;
    for (size_t p : written) sentinels.push_back(args_[p]);
    bool ran = run_once(set, "run");
    report_entry.ran = ran;
    std::vector<tensor::HostTensor> first_outputs;
    std::vector<OutputComparison> first;
    if (ran) {
      for (size_t o = 0; o < written.size(); ++o) {
        size_t p = written[o];
        const ReferenceOutput& ref = reference[o];
        bool prefilled = func_->params[p].role == ir::ParamRole::kOutput;
        first.push_back(
            compare_output(ref.native, ref.exact, args_[p], ref.tolerance, prefilled ? &sentinels[o] : nullptr));
        report(first.back(), set.label, ref.name, args_[p].shape(), "run");
        report_entry.outputs.push_back(
            {ref.name, first.back().normalized_error, ref.tolerance, ref.reference_error, first.back().ok()});
        first_outputs.push_back(args_[p]);
      }
      check_changes_with_input(set, first_outputs, sentinels, reference);
    }
    if (ran && options_.check_determinism) rerun_with_garbage(set, reference, sentinels, first_outputs, first);
    verdict_.input_sets.push_back(std::move(report_entry));
    if (ran) seen_.push_back({set.label, std::move(first_outputs), std::move(reference)});
  }

  // The outputs must not equal those of an earlier input set whose reference differs
  // where the candidate wrote: a stale result, or a cache keyed on pointers or on part of
  // the input. (Unwritten elements are reported as such, not as ignoring the input.)
  void check_changes_with_input(const InputSet& set, const std::vector<tensor::HostTensor>& outputs,
                                const std::vector<tensor::HostTensor>& sentinels,
                                const std::vector<ReferenceOutput>& reference) {
    for (const Seen& earlier : seen_) {
      bool identical = true;
      for (size_t o = 0; o < outputs.size() && identical; ++o) identical = same_bits(outputs[o], earlier.outputs[o]);
      if (!identical) continue;
      for (size_t o = 0; o < outputs.size(); ++o) {
        const tensor::HostTensor &now = reference[o].exact, &then = earlier.reference[o].exact;
        bool prefilled = func_->params[reference[o].param_index].role == ir::ParamRole::kOutput;
        double scale = 0, difference = 0;
        for (int64_t i = 0; i < now.num_elements(); ++i) {
          double a = now.get(i), b = then.get(i);
          if (!std::isfinite(a) || !std::isfinite(b)) continue;
          scale = std::max(scale, std::fabs(a));
          if (!prefilled || !same_bits(outputs[o], sentinels[o], i)) difference = std::max(difference, std::fabs(a - b));
        }
        difference /= std::max(scale, 1e-30);
        if (difference <= reference[o].tolerance) continue;
        fail(FailureKind::kIgnoresInput, set.label,
             fmt::format("the outputs are bitwise identical to those for input set \"{}\", although the reference "
                         "output {} differs between the two by {:.3g} of its scale",
                         earlier.label, reference[o].name, difference));
        return;
      }
    }
  }

  // The same inputs again, outputs pre-filled with garbage instead of the sentinel.
  void rerun_with_garbage(const InputSet& set, const std::vector<ReferenceOutput>& reference,
                          const std::vector<tensor::HostTensor>& sentinels,
                          const std::vector<tensor::HostTensor>& first_outputs,
                          const std::vector<OutputComparison>& first) {
    const std::vector<size_t>& written = reference_.output_params();
    load(set, /*sentinel=*/false);
    std::vector<tensor::HostTensor> garbage;
    for (size_t o = 0; o < written.size(); ++o) {
      garbage.push_back(args_[written[o]]);
      // A garbage element that happens to equal what the first run wrote (16-bit types
      // have few values) cannot tell a skipped element from a written one, and is then
      // judged as written: the sentinel stands in for it, which no run writes.
      for (int64_t i = 0; i < garbage[o].num_elements(); ++i) {
        if (same_bits(garbage[o], first_outputs[o], i)) {
          std::memcpy(static_cast<uint8_t*>(garbage[o].data()) + i * garbage[o].dtype().bytes(),
                      static_cast<const uint8_t*>(sentinels[o].data()) + i * sentinels[o].dtype().bytes(),
                      static_cast<size_t>(garbage[o].dtype().bytes()));
        }
      }
    }
    if (!run_once(set, "repeated run")) return;
    for (size_t o = 0; o < written.size(); ++o) {
      size_t p = written[o];
      const ReferenceOutput& ref = reference[o];
      const tensor::HostTensor& second = args_[p];
      bool prefilled = func_->params[p].role == ir::ParamRole::kOutput;
      OutputComparison c = compare_output(ref.native, ref.exact, second, ref.tolerance, prefilled ? &garbage[o] : nullptr);
      // Only what the first run did not already show: work skipped on repeated inputs,
      // results that depend on what the output held before.
      OutputComparison news = c;
      if (first[o].unwritten > 0) news.unwritten = 0;
      if (first[o].non_finite > 0) news.non_finite = 0;
      if (first[o].wrong > 0) news.wrong = 0;
      report(news, set.label, ref.name, second.shape(), "repeated run (same inputs, garbage pre-filled)");

      // Determinism over the elements both runs wrote.
      int64_t differ = 0, first_index = -1;
      double scale = std::max(c.reference_scale, 1e-30);
      for (int64_t i = 0; i < second.num_elements(); ++i) {
        // Unwritten in either run: reported as such, not as nondeterminism.
        if (prefilled && (same_bits(second, garbage[o], i) || same_bits(first_outputs[o], sentinels[o], i))) continue;
        double a = first_outputs[o].get(i), b = second.get(i);
        bool agree = same_bits(first_outputs[o], second, i) || (std::isnan(a) && std::isnan(b)) ||
                     (options_.determinism_tolerance > 0 && std::fabs(a - b) <= options_.determinism_tolerance * scale);
        if (agree) continue;
        if (first_index < 0) first_index = i;
        ++differ;
      }
      if (differ > 0) {
        fail(FailureKind::kNondeterministic, set.label,
             fmt::format("output {}: {} of {} elements differ between two runs on the same inputs (first {}: "
                         "{:.9g}, then {:.9g})",
                         ref.name, differ, second.num_elements(), format_index(second.shape(), first_index),
                         first_outputs[o].get(first_index), second.get(first_index)));
      }
    }
  }

  // Trivial outputs judged like the candidate, on every input set; a calibration set of
  // the same distribution stands for what a cheater knows in advance (the reference's
  // mean, another input's output). A trivial output makes the problem weak only if it
  // passes on every set: one set alone would let chance decide for near-constant outputs.
  void audit_trivial_outputs(const InputSet& set, const std::vector<ReferenceOutput>& reference) {
    std::vector<ReferenceOutput> calibration =
        reference_.compute_native(interp::make_arguments(func_, calibration_seed_ ^ set.seed, set.distribution));
    for (const TrivialOutput& trivial : make_trivial_outputs(func_, set.args, reference, &calibration)) {
      bool passes = passes_our_check(trivial, reference);
      auto [it, inserted] = trivial_passes_.try_emplace(trivial.name, passes);
      if (!inserted) it->second = it->second && passes;
    }
  }

  const Reference& reference_;
  const ir::PrimFunc& func_;
  Candidate& candidate_;
  const VerifyOptions& options_;
  Verdict verdict_;
  std::vector<tensor::HostTensor> args_;  // the candidate's buffers, reused for every run
  std::vector<Seen> seen_;
  std::map<std::string, bool> trivial_passes_;
  uint64_t calibration_seed_ = 0;
  uint64_t garbage_seed_ = 0;
};

}  // namespace

Verdict verify(const Reference& reference, Candidate& candidate, const VerifyOptions& options) {
  if (options.distributions.empty()) throw UserError("verify: no input distributions given; a check of nothing passes anything");
  if (!(options.determinism_tolerance >= 0)) throw UserError("verify: the determinism tolerance must be >= 0");
  return Verification(reference, candidate, options).run();
}

Verdict verify(const ir::PrimFunc& reference, Candidate& candidate, const VerifyOptions& options) {
  return verify(Reference(reference, options.reference), candidate, options);
}

}  // namespace dragon::harness
