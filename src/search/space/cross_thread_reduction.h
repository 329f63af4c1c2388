// Steps shared by the cross-thread reduction rule and the default GPU schedule: gather a
// reduction block's reduce loops innermost into one loop, split it by a thread count and
// bind the inner part to a thread axis, which lowering turns into per-thread partial
// results combined by a tree in shared memory (lower_cross_thread_reduction).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"

namespace dragon::search {

struct ReductionLoops {
  std::vector<schedule::LoopRV> spatial;  // the loops above, feeding spatial variables, outermost first
  schedule::LoopRV reduce;                // every reduce loop, fused
};

// A reduction block's loops arranged spatial-outside, reduce-inside, each reduce loop kept.
struct ArrangedReductionLoops {
  std::vector<schedule::LoopRV> spatial;  // as in ReductionLoops
  std::vector<schedule::LoopRV> reduce;   // the reduce loops, outermost first (at least one)
};

// Reorders the block's own loops (the innermost chain of single loops down to it) so the
// reduce ones are innermost, keeping each group's order. nullopt, with `sch` unchanged,
// when a loop feeds both kinds or an ordered variable, or a loop shared with other blocks
// feeds the reduction. `spatial` lists the shared loops too. Loops stay separate, so a
// conv's input index keeps its plain strides (fusing them costs a div/mod per term).
// With `inner` kOrdered the same for a scan's ordered loops (`reduce` then holds them; a
// block with an opaque variable gets nullopt): for each spatial instance the ordered
// values still run in increasing order, all an ordered variable asks.
std::optional<ArrangedReductionLoops> arrange_reduction_loops(schedule::Schedule& sch, schedule::BlockRV block,
                                                              ir::IterKind inner = ir::IterKind::kReduce);

// arrange_reduction_loops, then the reduce loops fused into one (what binding a thread
// axis to the reduction needs).
std::optional<ReductionLoops> gather_reduction_loops(schedule::Schedule& sch, schedule::BlockRV block);

// Splits `reduce` into [rest, threads] and binds the inner loop to `thread_axis`; returns
// the outer (serial) loop.
schedule::LoopRV bind_reduction_to_threads(schedule::Schedule& sch, schedule::LoopRV reduce,
                                           const schedule::SplitFactor& threads, const std::string& thread_axis);

// Whether GPU lowering accepts every cross-thread reduction of `func` (the update is
// C = C op x with op +, *, max or min and an init that loads nothing, and the loops have
// the shape it handles); the lowering pass itself decides, so the two never disagree.
bool lowers_across_threads(const ir::PrimFunc& func, const lower::Target& target);

}  // namespace dragon::search
