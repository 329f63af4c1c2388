// Candidates (postproc.h): a sketch replayed with fresh or given decisions, then the
// postprocessors after EnterPostproc. ScheduleErrors become CandidateFailures here, so
// search never sees one.
#include <map>
#include <memory>

#include "dragon/schedule/schedule_error.h"
#include "dragon/search/postproc.h"
#include "dragon/support/error.h"
#include "postproc/postproc.h"
#include "space/decision_sampler.h"

namespace dragon::search {

std::string_view failure_kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::kReplay: return "replay";
    case FailureKind::kPostproc: return "postproc";
    case FailureKind::kRejected: return "rejected";
  }
  return "replay";
}

std::optional<CandidateFailure> apply_postprocs(schedule::Schedule& sch, const lower::Target& target,
                                                const std::vector<PostprocSpec>& postprocs) {
  sch.enter_postproc();
  for (const PostprocSpec& spec : postprocs) {
    std::unique_ptr<Postproc> postproc = make_postproc(spec, target);
    try {
      if (std::optional<std::string> why = postproc->apply(sch)) {
        return CandidateFailure{FailureKind::kRejected, spec.postproc, *why};
      }
    } catch (const schedule::ScheduleError& e) {
      return CandidateFailure{FailureKind::kPostproc, spec.postproc, e.what()};
    }
  }
  return std::nullopt;
}

namespace {

CandidateResult replay_with(const schedule::Trace& trace, const ir::PrimFunc& func, const lower::Target& target,
                            const RuleSet& rules, int64_t seed, const schedule::Trace::DecisionProvider& decide) {
  schedule::Schedule sch(func, seed);
  try {
    trace.apply_to(sch, /*remove_postproc=*/true, decide);
  } catch (const schedule::ScheduleError& e) {
    return CandidateFailure{FailureKind::kReplay, "replay", e.what()};
  } catch (const UserError& e) {
    // The trace no longer fits under these decisions (a lookup finds another number of
    // loops than it recorded): that candidate does not exist.
    return CandidateFailure{FailureKind::kReplay, "replay", e.what()};
  }
  if (std::optional<CandidateFailure> failure = apply_postprocs(sch, target, rules.postprocs)) return *failure;
  return SpaceCandidate{sch.trace(), sch.func()};
}

}  // namespace

struct SketchSampler::State {
  Sketch sketch;
  ir::PrimFunc func;
  lower::Target target;
  const RuleSet* rules;
  DecisionSampler decisions;
};

SketchSampler::SketchSampler(Sketch sketch, ir::PrimFunc func, lower::Target target, const RuleSet& rules) {
  DecisionSampler decisions(sketch.trace, func, target);
  state_ = std::make_unique<State>(
      State{std::move(sketch), std::move(func), std::move(target), &rules, std::move(decisions)});
}
SketchSampler::~SketchSampler() = default;
SketchSampler::SketchSampler(SketchSampler&&) noexcept = default;
SketchSampler& SketchSampler::operator=(SketchSampler&&) noexcept = default;

CandidateResult SketchSampler::sample(int64_t seed) const {
  // Tiles and categoricals drawn before the replay, redrawn while their thread counts
  // cannot fit (decision_sampler.h); compute locations sampled by the replay itself.
  schedule::RandomEngine rng(seed);
  std::map<size_t, schedule::Arg> drawn = state_->decisions.draw(rng);
  auto decide = [&](size_t index, const schedule::Instruction&, const std::optional<schedule::Arg>&) {
    auto it = drawn.find(index);
    return it != drawn.end() ? std::optional<schedule::Arg>(it->second) : std::optional<schedule::Arg>();
  };
  return replay_with(state_->sketch.trace, state_->func, state_->target, *state_->rules, rng.fork_seed(), decide);
}

CandidateResult sample_candidate(const Sketch& sketch, const ir::PrimFunc& func, const lower::Target& target,
                                 const RuleSet& rules, int64_t seed) {
  return SketchSampler(sketch, func, target, rules).sample(seed);
}

CandidateResult replay_candidate(const schedule::Trace& trace, const ir::PrimFunc& func, const lower::Target& target,
                                 const RuleSet& rules, int64_t seed) {
  return replay_with(trace, func, target, rules, seed, {});
}

}  // namespace dragon::search
