// The verification protocol: input sets (prepared once: drawn, their references computed,
// trivial outputs audited), the runs of the candidate on each, and the checks of every
// run. Per base set: the sentinel run, then (optionally) the same inputs again with
// garbage pre-filled; per sibling set, the sentinel run alone, after its base (and the
// repeated run only where the first left the sentinel).
#include "dragon/harness/verify.h"

#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "dragon/harness/input_siblings.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/harness/trivial_outputs.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

FailureKind failure_of(RunStatus status) {
  switch (status) {
    case RunStatus::kFailed: return FailureKind::kFailed;
    case RunStatus::kCrashed: return FailureKind::kCrashed;
    case RunStatus::kTimedOut: return FailureKind::kTimedOut;
    case RunStatus::kNoHandshake: return FailureKind::kNoHandshake;
    case RunStatus::kWroteOutOfBounds: return FailureKind::kOutOfBoundsWrite;
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

void copy_element(tensor::HostTensor& to, const tensor::HostTensor& from, int64_t i) {
  const int64_t width = to.dtype().bytes();
  std::memcpy(static_cast<uint8_t*>(to.data()) + i * width, static_cast<const uint8_t*>(from.data()) + i * width,
              static_cast<size_t>(width));
}

// Trivial outputs judged like a candidate, on every base set; a calibration set of the
// same distribution stands for what a cheater knows in advance (the reference's mean,
// another input's output). A trivial output makes the problem weak only if it passes on
// every set: one set alone would let chance decide for near-constant outputs.
class TrivialAudit {
 public:
  TrivialAudit(const Reference& reference, uint64_t calibration_seed)
      : reference_(reference), calibration_seed_(calibration_seed) {}

  void add(const PreparedSet& set) {
    const ir::PrimFunc& func = reference_.func();
    std::vector<ReferenceOutput> calibration = reference_.compute_native(
        interp::make_arguments(func, calibration_seed_ ^ set.seed, set.distribution));
    for (const TrivialOutput& trivial : make_trivial_outputs(func, set.args, set.reference, &calibration)) {
      bool passes = passes_our_check(trivial, set.reference);
      auto [it, inserted] = passes_.try_emplace(trivial.name, passes);
      if (!inserted) it->second = it->second && passes;
    }
  }

  std::vector<std::string> passing() const {
    std::vector<std::string> names;
    for (const auto& [name, passes] : passes_) {
      if (passes) names.push_back(name);
    }
    return names;
  }

 private:
  const Reference& reference_;
  uint64_t calibration_seed_;
  std::map<std::string, bool> passes_;
};

}  // namespace

PreparedInputs::PreparedInputs(const Reference& reference, const VerifyOptions& options)
    : reference_(&reference), options_(options) {
  if (options.distributions.empty()) throw UserError("verify: no input distributions given; a check of nothing passes anything");
  if (!(options.determinism_tolerance >= 0)) throw UserError("verify: the determinism tolerance must be >= 0");
  if (options.sibling_sets < 0) throw UserError("verify: the number of sibling sets must be >= 0");
  const ir::PrimFunc& func = reference.func();
  seed_ = options.seed.has_value() ? *options.seed : secret_seed();
  SeedSequence seeds(seed_);
  for (interp::Distribution d : options.distributions) {
    uint64_t seed = seeds.next();
    sets_.push_back({std::string(interp::distribution_name(d)), d, seed, false, interp::make_arguments(func, seed, d), {}});
  }
  const uint64_t sibling_seed = seeds.next();
  const uint64_t calibration_seed = seeds.next();
  garbage_seed_ = seeds.next();

  // Siblings of the first two sets (the signed ones, where a change crosses zero).
  const size_t bases = std::min<size_t>(sets_.size(), 2);
  std::vector<std::vector<tensor::HostTensor>> base_args;
  std::vector<std::string> base_labels;
  for (size_t b = 0; b < bases; ++b) {
    base_args.push_back(sets_[b].args);
    base_labels.push_back(sets_[b].label);
  }
  for (const InputSibling& sibling : make_siblings(func, base_args, base_labels, sibling_seed, options.sibling_sets)) {
    const PreparedSet& base = sets_[sibling.base];
    PreparedSet set{sibling.label, base.distribution, base.seed, true, base.args, {}};
    apply_sibling(sibling, set.args);
    sets_.push_back(std::move(set));
  }

  TrivialAudit audit(reference, calibration_seed);
  for (PreparedSet& set : sets_) {
    set.reference = reference.compute(set.args);
    if (options.audit_trivial_outputs && !set.sibling) audit.add(set);
  }
  if (options.audit_trivial_outputs) weak_because_ = audit.passing();
}

namespace {

// One candidate judged on prepared sets.
class Verification {
 public:
  Verification(const PreparedInputs& inputs, Candidate& candidate)
      : inputs_(inputs),
        reference_(inputs.reference()),
        func_(inputs.reference().func()),
        candidate_(candidate),
        options_(inputs.options()) {
    verdict_.candidate = candidate.name();
    verdict_.function = func_->name;
    verdict_.seed = inputs.seed();
  }

  Verdict run() {
    for (const PreparedSet& set : inputs_.sets()) judge(set);
    verdict_.weak_because = inputs_.weak_because();
    verdict_.passed = verdict_.failures.empty();
    return std::move(verdict_);
  }

 private:
  struct Seen {
    std::string label;
    std::vector<tensor::HostTensor> outputs;  // the candidate's, from the sentinel run
    const std::vector<ReferenceOutput>* reference;
  };

  // What a repeated run on the same inputs (garbage pre-filled) left in the outputs.
  struct Rerun {
    std::vector<tensor::HostTensor> garbage;  // the pre-fill, per written parameter
    std::vector<tensor::HostTensor> outputs;
  };

  void fail(FailureKind kind, const std::string& set, std::string message) {
    verdict_.failures.push_back({kind, set, std::move(message)});
  }

  const std::string& param_name(size_t p) const { return func_->params[p].buffer->name; }
  bool prefilled(size_t p) const { return func_->params[p].role == ir::ParamRole::kOutput; }

  // Refills the candidate's buffers in place (the same addresses every run: a cache keyed
  // on pointers returns stale results) with `set`'s inputs; outputs get the pre-fill.
  void load(const PreparedSet& set, bool sentinel) {
    if (args_.size() != set.args.size()) args_ = set.args;
    for (size_t p = 0; p < args_.size(); ++p) {
      tensor::HostTensor& arg = args_[p];
      if (arg.dtype() != set.args[p].dtype() || arg.shape() != set.args[p].shape()) arg = set.args[p];
      if (prefilled(p)) {
        if (sentinel) {
          fill_sentinel(arg);
        } else {
          fill_garbage(arg, inputs_.garbage_seed() ^ (set.seed + p));
        }
      } else {
        std::memcpy(arg.data(), set.args[p].data(), static_cast<size_t>(arg.size_bytes()));
      }
    }
  }

  // One run of the candidate on `set` as loaded. False if it did not end normally or
  // left its arguments unusable; the failures are recorded.
  bool run_once(const PreparedSet& set, std::string_view which) {
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
              const std::vector<int64_t>& shape, std::string_view which, const std::string& note = "") {
    if (c.ok()) return;
    std::string detail = fmt::format("{}: output {}: {}{}", which, output, describe(c, shape), note);
    if (c.unwritten > 0) fail(FailureKind::kUnwrittenOutput, set, detail);
    if (c.non_finite > 0) fail(FailureKind::kNanOrInf, set, detail);
    if (c.wrong > 0) fail(FailureKind::kWrongValues, set, detail);
  }

  void judge(const PreparedSet& set) {
    InputSetReport report_entry{set.label, std::string(interp::distribution_name(set.distribution)), set.seed, false,
                                {}};
    const std::vector<ReferenceOutput>& reference = set.reference;
    const std::vector<size_t>& written = reference_.output_params();
    load(set, /*sentinel=*/true);
    std::vector<tensor::HostTensor> sentinels;
    for (size_t p : written) sentinels.push_back(args_[p]);
    const bool ran = run_once(set, "run");
    report_entry.ran = ran;
    if (!ran) {
      verdict_.input_sets.push_back(std::move(report_entry));
      return;
    }
    std::vector<tensor::HostTensor> first_outputs;
    for (size_t p : written) first_outputs.push_back(args_[p]);
    // Siblings get the repeated run only where the first left the sentinel somewhere: it
    // tells an unwritten element from a NaN the kernel carried from the pre-fill.
    std::optional<Rerun> rerun;
    if (options_.check_determinism && (!set.sibling || holds_sentinel(first_outputs, sentinels))) {
      rerun = rerun_with_garbage(set, first_outputs, sentinels);
    }

    std::vector<OutputComparison> first;
    for (size_t o = 0; o < written.size(); ++o) {
      const size_t p = written[o];
      const ReferenceOutput& ref = reference[o];
      std::string note;
      tensor::HostTensor prefill = sentinels[o];
      if (prefilled(p) && rerun) note = tell_carried_prefill(prefill, first_outputs[o], *rerun, o);
      first.push_back(
          compare_output(ref.native, ref.exact, first_outputs[o], ref.tolerance, prefilled(p) ? &prefill : nullptr));
      report(first.back(), set.label, ref.name, first_outputs[o].shape(), "run", note);
      report_entry.outputs.push_back(
          {ref.name, first.back().normalized_error, ref.tolerance, ref.reference_error, first.back().ok()});
    }
    check_changes_with_input(set, first_outputs, sentinels, reference);
    if (rerun) judge_rerun(set, *rerun, first_outputs, sentinels, first);
    verdict_.input_sets.push_back(std::move(report_entry));
    seen_.push_back({set.label, std::move(first_outputs), &reference});
  }

  bool holds_sentinel(const std::vector<tensor::HostTensor>& outputs,
                      const std::vector<tensor::HostTensor>& sentinels) const {
    const std::vector<size_t>& written = reference_.output_params();
    for (size_t o = 0; o < written.size(); ++o) {
      if (!prefilled(written[o])) continue;
      for (int64_t i = 0; i < outputs[o].num_elements(); ++i) {
        if (same_bits(outputs[o], sentinels[o], i)) return true;
      }
    }
    return false;
  }

  // Elements that hold the sentinel after the first run but were written by the repeated
  // run: the kernel wrote them, with a NaN carried from the pre-filled output (read before
  // it was written, or read past the end of an input into it). They are written NaNs
  // where the reference is finite, not unwritten elements: the pre-fill they are judged
  // against is moved off them, and the message says why.
  std::string tell_carried_prefill(tensor::HostTensor& prefill, const tensor::HostTensor& first_output,
                                   const Rerun& rerun, size_t o) {
    int64_t carried = 0;
    for (int64_t i = 0; i < prefill.num_elements(); ++i) {
      if (!same_bits(first_output, prefill, i) || same_bits(rerun.outputs[o], rerun.garbage[o], i)) continue;
      copy_element(prefill, rerun.garbage[o], i);  // not the sentinel: the element counts as written
      ++carried;
    }
    if (carried == 0) return "";
    return fmt::format(
        " ({} of them hold the output's NaN pre-fill although the kernel wrote them, as the repeated run shows: a "
        "value read from the output before it was written, or past the end of an input, carried into the result)",
        carried);
  }

  // The outputs must not equal those of an earlier input set whose reference differs
  // where the candidate wrote: a stale result, or a cache keyed on pointers or on part of
  // the input. (Unwritten elements are reported as such, not as ignoring the input.)
  void check_changes_with_input(const PreparedSet& set, const std::vector<tensor::HostTensor>& outputs,
                                const std::vector<tensor::HostTensor>& sentinels,
                                const std::vector<ReferenceOutput>& reference) {
    for (const Seen& earlier : seen_) {
      bool identical = true;
      for (size_t o = 0; o < outputs.size() && identical; ++o) identical = same_bits(outputs[o], earlier.outputs[o]);
      if (!identical) continue;
      for (size_t o = 0; o < outputs.size(); ++o) {
        const tensor::HostTensor &now = reference[o].exact, &then = (*earlier.reference)[o].exact;
        const bool filled = prefilled(reference[o].param_index);
        double scale = 0, difference = 0;
        for (int64_t i = 0; i < now.num_elements(); ++i) {
          double a = now.get(i), b = then.get(i);
          if (!std::isfinite(a) || !std::isfinite(b)) continue;
          scale = std::max(scale, std::fabs(a));
          if (!filled || !same_bits(outputs[o], sentinels[o], i)) difference = std::max(difference, std::fabs(a - b));
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
  std::optional<Rerun> rerun_with_garbage(const PreparedSet& set, const std::vector<tensor::HostTensor>& first_outputs,
                                          const std::vector<tensor::HostTensor>& sentinels) {
    const std::vector<size_t>& written = reference_.output_params();
    load(set, /*sentinel=*/false);
    Rerun rerun;
    for (size_t o = 0; o < written.size(); ++o) {
      rerun.garbage.push_back(args_[written[o]]);
      keep_garbage_off(rerun.garbage[o], first_outputs[o]);
    }
    if (!run_once(set, "repeated run")) return std::nullopt;
    for (size_t p : written) rerun.outputs.push_back(args_[p]);
    return rerun;
  }

  // What the repeated run shows that the first did not (work skipped on repeated inputs,
  // results that depend on what the output held before), and whether the two agree.
  void judge_rerun(const PreparedSet& set, const Rerun& rerun, const std::vector<tensor::HostTensor>& first_outputs,
                   const std::vector<tensor::HostTensor>& sentinels, const std::vector<OutputComparison>& first) {
    const std::vector<size_t>& written = reference_.output_params();
    for (size_t o = 0; o < written.size(); ++o) {
      const size_t p = written[o];
      const ReferenceOutput& ref = set.reference[o];
      const tensor::HostTensor& second = rerun.outputs[o];
      const bool filled = prefilled(p);
      OutputComparison c =
          compare_output(ref.native, ref.exact, second, ref.tolerance, filled ? &rerun.garbage[o] : nullptr);
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
        if (filled && (same_bits(second, rerun.garbage[o], i) || same_bits(first_outputs[o], sentinels[o], i))) continue;
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

  const PreparedInputs& inputs_;
  const Reference& reference_;
  const ir::PrimFunc& func_;
  Candidate& candidate_;
  const VerifyOptions& options_;
  Verdict verdict_;
  std::vector<tensor::HostTensor> args_;  // the candidate's buffers, reused for every run
  std::vector<Seen> seen_;
};

}  // namespace

Verdict verify(const PreparedInputs& inputs, Candidate& candidate) { return Verification(inputs, candidate).run(); }

Verdict verify(const Reference& reference, Candidate& candidate, const VerifyOptions& options) {
  return verify(PreparedInputs(reference, options), candidate);
}

Verdict verify(const ir::PrimFunc& reference, Candidate& candidate, const VerifyOptions& options) {
  return verify(Reference(reference, options.reference), candidate, options);
}

}  // namespace dragon::harness
