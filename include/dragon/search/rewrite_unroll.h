// RewriteUnroll: MetaSchedule's postprocessor for the unroll decision a design space
// samples. A block annotated "meta_schedule.unroll_explicit" (or "_implicit") = N, the root
// block in MetaSchedule's sketches, hands N to the outermost loop of every loop nest
// directly under it as "pragma_auto_unroll_max_step" = N (what lowering's unroll_loops
// reads) and "pragma_unroll_explicit" = 1 or 0; the block's annotation is then removed.
// Every step goes through the Schedule, so the trace replays it. N = 0 only removes it.
#pragma once

#include "dragon/schedule/schedule.h"

namespace dragon::search {

// Rewrites every annotated block; returns how many loops were annotated.
int rewrite_unroll(schedule::Schedule& sch);

}  // namespace dragon::search
