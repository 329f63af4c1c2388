// Candidates of a design space: a sketch replayed with fresh or given decisions, then the
// RuleSet's postprocessors (rewrite cooperative fetch, bind what is unbound, unroll and
// parallel/vectorize annotations, decompose reductions, verify GPU limits), recorded after
// EnterPostproc. A candidate that fails is a value naming the stage and the reason: no
// ScheduleError leaves these functions. Not measurement and not the search strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace.h"
#include "dragon/search/design_space.h"
#include "dragon/search/rule_set.h"

namespace dragon::search {

// A scheduled candidate, ready to lower and measure.
struct SpaceCandidate {
  // The whole trace: the sketch's instructions with this candidate's decisions, then
  // EnterPostproc and what the postprocessors recorded. Replaying it on the unscheduled
  // function gives `func` again (schedule::replay), so it is what a database stores.
  schedule::Trace trace;
  ir::PrimFunc func;
};

enum class FailureKind : uint8_t {
  kReplay,     // a sketch instruction's precondition failed under these decisions, or the
               // trace no longer fits them (a lookup found another number of loops)
  kPostproc,   // a postprocessor's primitive failed (ScheduleError)
  kRejected,   // a verifying postprocessor rejected it (GPU limits, thread-extent bounds)
};
std::string_view failure_kind_name(FailureKind kind);

struct CandidateFailure {
  FailureKind kind = FailureKind::kReplay;
  std::string stage;    // "replay", or the postprocessor's name ("verify_gpu_code")
  std::string message;  // the ScheduleError's one-line what(), or the limit broken
};

// A candidate or why there is none.
class CandidateResult {
 public:
  CandidateResult(SpaceCandidate candidate) : value_(std::move(candidate)) {}          // NOLINT
  CandidateResult(CandidateFailure failure) : value_(std::move(failure)) {}       // NOLINT
  bool ok() const { return std::holds_alternative<SpaceCandidate>(value_); }
  const SpaceCandidate& candidate() const { return std::get<SpaceCandidate>(value_); }
  SpaceCandidate& candidate() { return std::get<SpaceCandidate>(value_); }
  const CandidateFailure& failure() const { return std::get<CandidateFailure>(value_); }

 private:
  std::variant<SpaceCandidate, CandidateFailure> value_;
};

// Fresh candidates of one sketch: its perfect tiles and categoricals drawn by a decision
// sampler (built once per sketch: its analysis of the sketch is the costly part) so that
// their thread counts, shared-memory copies and registers fit the target
// (space/decision_sampler.h), compute locations sampled by the replay, then
// `rules.postprocs`. Without the sampler's fitting, most draws of a tight space are
// refused by verify_gpu_code (a split-K GEMM of K = 524288: every one). The sketch's
// recorded decisions give the tiles' extents. `func` and `rules` must outlive it; sample()
// may be called from several threads at once.
class SketchSampler {
 public:
  SketchSampler(Sketch sketch, ir::PrimFunc func, lower::Target target, const RuleSet& rules);
  ~SketchSampler();
  SketchSampler(SketchSampler&&) noexcept;
  SketchSampler& operator=(SketchSampler&&) noexcept;

  CandidateResult sample(int64_t seed) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One fresh candidate of `sketch` drawn from `seed` (SketchSampler, built for this call).
CandidateResult sample_candidate(const Sketch& sketch, const ir::PrimFunc& func, const lower::Target& target,
                                 const RuleSet& rules, int64_t seed);

// Replays `trace` (a sketch's or a candidate's trace, with decisions a mutator may have
// changed: Trace::with_decision; the part after EnterPostproc, if any, is dropped and
// redone) on `func` with its recorded decisions (perfect tiles repaired to the extents,
// stale compute locations snapped, as replay does); decisions missing from the trace are
// drawn from `seed`. Then the postprocessors.
CandidateResult replay_candidate(const schedule::Trace& trace, const ir::PrimFunc& func, const lower::Target& target,
                                 const RuleSet& rules, int64_t seed = 1);

// Applies the postprocessors `postprocs` to a schedule positioned after its sketch
// (EnterPostproc is recorded first). On success `sch` holds the candidate; on failure
// its state is unspecified (the caller drops it).
std::optional<CandidateFailure> apply_postprocs(schedule::Schedule& sch, const lower::Target& target,
                                                const std::vector<PostprocSpec>& postprocs);

}  // namespace dragon::search
