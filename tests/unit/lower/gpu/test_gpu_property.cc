// Property test of the GPU pipeline: every op kind under random GPU-style schedules
// (random binds, shared caches with cooperative fetch, vthreads), completed by AutoBind,
// lowers for the H200 or is refused with a UserError; up to the kernel form (the last
// stage the sequential interpreter can run) each GPU pass keeps the results, the kernel
// form passes the flat-form checks and computes the op when its threads run one after
// another between barriers (barrier_simulator.h). AutoBind alone on every op as well.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "dragon/interp/input_generator.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/auto_bind.h"
#include "dragon/support/error.h"
#include "barrier_simulator.h"
#include "gpu_test_util.h"
#include "unit/lower/lower_test_util.h"
#include "unit/schedule/random_trace.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::lower {
namespace {

using schedule::testing::random_schedule;
using schedule::testing::RandomTraceOptions;
using schedule::testing::TargetStyle;

TEST(GpuProperty, EveryOpUnderRandomGpuSchedulesLowersOrIsRefusedCleanly) {
  RandomTraceOptions options;
  options.style = TargetStyle::kGpu;
  options.steps = 6;
  int lowered = 0, refused = 0, cross_thread = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    for (int s = 0; s < 2; ++s) {
      schedule::Schedule sch = random_schedule(func, 31 * s + 7 * op.name.size(), options);
      search::auto_bind(sch);
      SCOPED_TRACE(op.name + " schedule " + std::to_string(s) + ":\n" + sch.trace().to_string());
      std::vector<testing::Stage> stages;
      try {
        stages = testing::lower_stages(sch.func(), Target::cuda_h200());
      } catch (const UserError& e) {
        if (std::getenv("DRAGON_GPU_PROPERTY_VERBOSE")) std::cout << op.name << ": " << e.what() << "\n";
        ++refused;
        continue;
      }
      ++lowered;
      ASSERT_TRUE(find_flat_form_problems(stages.back().func).empty()) << ir::print_function(stages.back().func);
      // The kernels themselves, threads run one after another between barriers.
      EXPECT_TRUE(testing::close_outputs(sch.func(), testing::serialize_between_barriers(stages.back().func)))
          << ir::print_function(stages.back().func);
      // The last stage before the kernel form, and the cross-thread reduction's output.
      for (const testing::Stage& stage : stages) {
        bool check = stage.pass == "inject_virtual_threads" ||
                     (stage.pass == "lower_cross_thread_reduction" && stage.changed);
        if (!check) continue;
        cross_thread += stage.pass == "lower_cross_thread_reduction";
        EXPECT_TRUE(testing::close_outputs(sch.func(), stage.func))
            << stage.pass << ":\n" << ir::print_function(stage.func);
      }
    }
  }
  const int kinds = static_cast<int>(ops::OpRegistry::global().kinds().size());
  EXPECT_EQ(lowered + refused, kinds * 2);
  EXPECT_GT(lowered, kinds);  // most random schedules fit the H200
  EXPECT_GT(cross_thread, 0);
  RecordProperty("lowered", lowered);
  RecordProperty("refused", refused);
  RecordProperty("cross_thread", cross_thread);
  std::cout << "lowered " << lowered << ", refused " << refused << ", cross-thread reductions " << cross_thread
            << "\n";
}

TEST(GpuProperty, AutoBindOfEveryOpComputesTheOpUnderBarrierSemantics) {
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    SCOPED_TRACE(op.name);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    schedule::Schedule sch(func);
    search::auto_bind(sch);
    ir::PrimFunc kernels = lower(sch.func(), Target::cuda_h200()).func;
    EXPECT_TRUE(testing::close_outputs(func, testing::serialize_between_barriers(kernels)))
        << ir::print_function(kernels);
  }
}

}  // namespace
}  // namespace dragon::lower
