// The default GPU schedule of the codegen tests: MetaSchedule's AutoBind (search/
// auto_bind.h) on every nest a schedule left unbound, so any op, scheduled or not, gets a
// launchable binding. The tests check what generated kernels compute, not their speed.
#pragma once

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"

namespace dragon::codegen::testing {

// Applies AutoBind to `sch` (its trace records the steps).
void apply_default_gpu_schedule(schedule::Schedule& sch);
ir::PrimFunc default_gpu_schedule(const ir::PrimFunc& func);

}  // namespace dragon::codegen::testing
