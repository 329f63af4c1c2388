// The design-space rules as a sketch space (rule_space.h): sketches from
// generate_design_space, fresh candidates from each sketch's SketchSampler, the others
// (mutated traces, stored records) from replay_candidate, failures typed.
#include <utility>

#include "dragon/search/rule_space.h"

#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

// A sketch's instructions without the draw recorded while it was generated, so every
// replay samples afresh (MetaSchedule builds its initial population from Trace(insts, {})).
schedule::Trace without_decisions(const schedule::Trace& trace) {
  schedule::Trace out;
  for (const schedule::Instruction& inst : trace.instructions()) out.append(inst);
  return out;
}

class RuleSpace final : public SketchSpace {
 public:
  RuleSpace(ir::PrimFunc func, lower::Target target, const RuleSet& rules, int64_t seed)
      : func_(std::move(func)), target_(std::move(target)), rules_(rules) {
    for (const Sketch& s : generate_design_space(func_, target_, rules_, seed)) {
      sketches_.push_back(without_decisions(s.trace.without_postproc()));
      samplers_.emplace_back(Sketch{s.trace.without_postproc(), s.applied}, func_, target_, rules_);
    }
    if (sketches_.empty()) throw UserError("the design space of " + func_->name + " has no sketch");
  }

  const ir::PrimFunc& func() const override { return func_; }
  const std::vector<schedule::Trace>& sketches() const override { return sketches_; }

  Realized realize(const schedule::Trace& trace, int64_t seed) const override {
    return realized(replay_candidate(trace, func_, target_, rules_, seed));
  }

  Realized sample(size_t index, int64_t seed) const override { return realized(samplers_.at(index).sample(seed)); }

 private:
  static Realized realized(CandidateResult c) {
    Realized r;
    if (!c.ok()) {
      const CandidateFailure& f = c.failure();
      r.failure = f.kind == FailureKind::kReplay ? MeasureStatus::kApplyFailed : MeasureStatus::kRejected;
      r.error = f.stage + ": " + f.message;
      return r;
    }
    r.trace = std::move(c.candidate().trace);
    r.func = c.candidate().func;
    return r;
  }

  ir::PrimFunc func_;
  lower::Target target_;
  const RuleSet& rules_;
  std::vector<schedule::Trace> sketches_;  // without decisions: what replays of them sample afresh
  std::vector<SketchSampler> samplers_;    // one per sketch, its recorded decisions kept for their extents
};

}  // namespace

std::unique_ptr<SketchSpace> make_rule_space(const ir::PrimFunc& func, const lower::Target& target,
                                             const RuleSet& rules, int64_t seed) {
  return std::make_unique<RuleSpace>(func, target, rules, seed);
}

}  // namespace dragon::search
