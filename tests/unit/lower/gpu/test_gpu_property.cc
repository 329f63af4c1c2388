// Property test of the GPU pipeline: every op kind under random GPU-style schedules
// (random binds, shared caches with cooperative fetch, vthreads), completed by AutoBind,
// lowers for the H200 or is refused with a UserError; up to the kernel form (the last
// stage the sequential interpreter can run) each GPU pass keeps the results, the kernel
// form passes the flat-form checks and computes the op when its threads run one after
// another between barriers (barrier_simulator.h). AutoBind alone on every op as well.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

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

// KernelBench's shapes: fusing their loops makes extents past i32 (a 4096^3 GEMM's three
// loops fused are 2^36), so a nest mixes i32 and i64 loop variables and a launch can ask for
// more blocks than CUDA indexes, which the small default shapes above never do. Too large to
// run; each random schedule, GPU-style for the H200 and CPU-style for the CPU, must lower or
// be refused with a UserError, never an internal error (carry_loop_values multiplied an i64
// extent by an i32 one, unify_thread_bindings made an i32 launch extent of 2^31).
TEST(GpuProperty, RandomSchedulesOfLargeWorkloadsLowerOrAreRefusedCleanly) {
  RandomTraceOptions gpu_style, cpu_style;
  gpu_style.style = TargetStyle::kGpu;
  cpu_style.style = TargetStyle::kCpu;
  int lowered = 0;
  auto lowers = [&](const schedule::Schedule& sch, const Target& target, const std::string& what) {
    try {
      lower(sch.func(), target);
      ++lowered;
    } catch (const UserError&) {
    } catch (const InternalError& e) {
      ADD_FAILURE() << what << ": " << e.what() << "\n" << sch.trace().to_string();
    }
  };
  for (const char* spec : {"matmul:m=4096,n=4096,k=4096", "batch_matmul:batch=128,m=512,n=2048,k=1024",
                           "cumsum:shape=32768x32768,dim=1", "sum:shape=128x4096x4095,axis=1,keepdim=true",
                           "argmax:shape=128x4096x4095,axis=1", "softmax:shape=4096x393216,axis=1",
                           "layer_norm:shape=16x64x256x256,normalized_dims=3",
                           "max_pool2d:batch=32,channels=64,height=512,width=512,kernel=2,stride=2",
                           "conv2d:batch=8,in_channels=64,out_channels=128,size=512x1024,kernel=3x3",
                           "conv_transpose3d:batch=16,in_channels=32,out_channels=64,size=16x32x32,kernel=3x3x3,"
                           "stride=2x2x2,padding=1x1x1,dilation=2x2x2"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      schedule::Schedule gpu = random_schedule(func, seed, gpu_style);
      search::auto_bind(gpu);
      lowers(gpu, Target::cuda_h200(), fmt::format("{} seed {} (GPU-style, H200)", spec, seed));
      lowers(random_schedule(func, seed, cpu_style), Target::cpu(), fmt::format("{} seed {} (CPU-style)", spec, seed));
    }
  }
  EXPECT_GT(lowered, 200);
  RecordProperty("lowered", lowered);
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
