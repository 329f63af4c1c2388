// default_gpu_schedule (default_gpu_schedule.h).
#include "default_gpu_schedule.h"

#include "dragon/search/auto_bind.h"

namespace dragon::codegen::testing {

void apply_default_gpu_schedule(schedule::Schedule& sch) { search::auto_bind(sch); }

ir::PrimFunc default_gpu_schedule(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  apply_default_gpu_schedule(sch);
  return sch.func();
}

}  // namespace dragon::codegen::testing
