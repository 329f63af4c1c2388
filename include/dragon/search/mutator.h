// Mutators: MetaSchedule's way of proposing a neighbour of a measured program. Each one
// changes one sampling decision of a trace (a tile size, an unroll depth, a thread count,
// a compute location: the roles design_space.h's sampling_sites gives) and returns the
// trace truncated at EnterPostproc, to be replayed and postprocessed again. One file per
// mutator under src/search/mutator/. Not the search strategy (evolutionary_search.h) and
// not a design-space rule.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/trace.h"

namespace dragon::search {

class Mutator {
 public:
  virtual ~Mutator() = default;
  // "mutate_tile_size", ...: for logs and statistics.
  virtual std::string_view name() const = 0;
  // `trace` with one decision changed (Trace::with_decision, postprocessing removed), or
  // nullopt when the trace has nothing this mutator can change. `func` is the unscheduled
  // function the trace applies to: mutators that need the program at a decision replay
  // the trace's prefix on it. Never throws for a trace that replays.
  virtual std::optional<schedule::Trace> apply(const schedule::Trace& trace, const ir::PrimFunc& func,
                                               schedule::RandomEngine& rng) const = 0;
};

// Moves a factor between two levels of one perfect tile (SamplePerfectTile), keeping the
// product and the innermost bound, or redraws a cooperative-fetch vector length (a
// SampleCategorical annotated "meta_schedule.cooperative_fetch").
std::unique_ptr<Mutator> make_mutate_tile_size();
// Redraws the SampleCategorical behind a "meta_schedule.unroll_explicit" or
// "meta_schedule.unroll_implicit" annotation.
std::unique_ptr<Mutator> make_mutate_unroll();
// Redraws a sampled thread count: a SampleCategorical used as the inner factor of a Split
// whose inner loop is bound to threadIdx.x (AutoBind's pattern).
std::unique_ptr<Mutator> make_mutate_thread_binding();
// Moves a block: another valid decision of one SampleComputeLocation, found by replaying
// the trace up to it.
std::unique_ptr<Mutator> make_mutate_compute_location();

struct WeightedMutator {
  std::shared_ptr<const Mutator> mutator;
  double probability = 0;
};

// MetaSchedule's defaults: CUDA tile size 0.9, unroll 0.08, thread binding 0.02; CPU tile
// size 0.9, unroll 0.03, compute location 0.05 (MutateParallel has no counterpart yet,
// its share goes to tile size).
std::vector<WeightedMutator> default_mutators(const lower::Target& target);

// Picks mutators by probability (a mutator that finds nothing to change is dropped and the
// draw repeated among the others), so a trace with any mutable decision gets a neighbour;
// nullopt when none applies.
std::optional<schedule::Trace> mutate(const schedule::Trace& trace, const ir::PrimFunc& func,
                                      const std::vector<WeightedMutator>& mutators, schedule::RandomEngine& rng);

}  // namespace dragon::search
