// RewriteCooperativeFetch: MetaSchedule's postprocessor for shared-memory copies. A copy
// block annotated "meta_schedule.cooperative_fetch" = V (the vector length the design
// space sampled) is spread over its kernel's threads: its innermost (fused) loop is split
// [rest, threadIdx.y, threadIdx.x, V], the thread parts bound, the V part vectorized, and
// the annotation removed. Every step goes through the Schedule, so the trace replays it.
// Not a design-space rule: it only realises what the rule sampled.
#pragma once

#include "dragon/schedule/schedule.h"

namespace dragon::search {

// Rewrites every annotated copy block; returns how many. The thread extents are those of
// the kernel (the loops bound to threadIdx.x / threadIdx.y under the copy's outermost
// blockIdx loop). In a kernel with tensor-core blocks, which use threadIdx.x as the
// warp's 32 lanes without binding it, threadIdx.x counts 32. A copy outside any kernel,
// or a kernel with no thread binding, is left alone (annotation kept).
int rewrite_cooperative_fetch(schedule::Schedule& sch);

}  // namespace dragon::search
