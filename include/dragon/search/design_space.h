// The design space of a function: sketches, i.e. traces whose sampling instructions
// (SamplePerfectTile, SampleCategorical, SampleComputeLocation) are left for search to
// decide, made by applying a RuleSet's rules to every block, consumers first
// (MetaSchedule's PostOrderApply). Also names each sampling instruction's role, which is
// what mutators change. Not the search strategy and not the postprocessors (postproc.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/trace.h"
#include "dragon/search/rule_set.h"

namespace dragon::search {

// A trace of the unscheduled function with sampling instructions still to decide. The
// recorded decisions are one valid draw (those made while the sketch was generated);
// replaying with other decisions (postproc.h) gives the other candidates of the sketch.
// The trace stops before EnterPostproc: postprocessors run per candidate.
struct Sketch {
  schedule::Trace trace;
  // What shaped it, one entry per rule application that changed something, in order:
  // "multi_level_tiling(C)", "cross_thread_reduction(x_max)", "auto_bind(softmax)".
  std::vector<std::string> applied;
};

// Applies `rules` (those RuleSet::rules_for the function's name gives) to `func`: for
// each rule in order, for each schedule made so far, for each block from the last to the
// first in program order (consumers before producers) that still exists and that the
// rule's selector matches, the rule returns one or more schedules (a fork, e.g.
// cross-thread reduction gives {reduced across threads, untouched}). Blocks a rule creates
// are not visited by that rule; blocks annotated "schedule_rule" = "None" are skipped by
// all rules. Sketches whose traces are equal (up to renaming) are kept once. `seed` seeds
// the draws recorded as the sketches' decisions. A rule that does not apply to a block
// leaves the schedule as it is, so the result has at least one sketch (possibly the
// empty trace). A rule whose primitive fails drops that fork only (the failure is not an
// error: the space is what applies).
std::vector<Sketch> generate_design_space(const ir::PrimFunc& func, const lower::Target& target,
                                          const RuleSet& rules, int64_t seed = 1);

// What a sampling instruction decides, for mutators (MetaSchedule's MutateTileSize,
// MutateUnroll, MutateThreadBinding, MutateComputeLocation) and the cost model.
enum class SamplingRole : uint8_t {
  kTileSize,         // SamplePerfectTile feeding a Split
  kVectorLength,     // SampleCategorical annotated as a cooperative fetch's vector length
  kUnroll,           // SampleCategorical annotated as an unroll_explicit/implicit step
  kThreadExtent,     // SampleCategorical used as a split factor whose loop is bound to threadIdx
  kComputeLocation,  // SampleComputeLocation
  kTileChoice,       // SampleCategorical among a rule's tiles or pipeline depths: a split factor of a loop
                     // bound to no thread, or annotated meta_schedule.software_pipeline_depth
  kOther,            // a sampling instruction in no pattern above
};
std::string_view sampling_role_name(SamplingRole role);

struct SamplingSite {
  size_t instruction = 0;  // index in the trace
  SamplingRole role = SamplingRole::kOther;
  // A categorical's value annotated on a block or loop: the annotation's key
  // ("meta_schedule.software_pipeline_depth", ...); empty otherwise.
  std::string annotation;
};

// The sampling instructions of `trace` (up to EnterPostproc) in order, with their roles,
// found from how their outputs are used later in the trace.
std::vector<SamplingSite> sampling_sites(const schedule::Trace& trace);

}  // namespace dragon::search
