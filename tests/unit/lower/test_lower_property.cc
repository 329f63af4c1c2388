// Property tests of lowering: every op kind under random schedules (splits with
// non-divisible factors, reorders, caches, compute_at, rfactor, inlining, bindings)
// computes bit for bit what the scheduled function does, after the pipeline and each pass.
#include <gtest/gtest.h>

#include <map>

#include "dragon/interp/input_generator.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "lower_test_util.h"
#include "unit/schedule/random_trace.h"

namespace dragon::lower {
namespace {

using schedule::testing::random_schedule;
using schedule::testing::RandomTraceOptions;
using schedule::testing::RandomTraceStats;
using schedule::testing::TargetStyle;
using testing::computes_the_same;

RandomTraceOptions style(TargetStyle target_style, int steps) {
  RandomTraceOptions options;
  options.style = target_style;
  options.steps = steps;
  return options;
}

// Lowers for the CPU and compares on the interpreter; an exception fails this case only.
void lowers_to_the_same(const ir::PrimFunc& scheduled, uint64_t seed) {
  try {
    Lowered lowered = lower(scheduled, Target::cpu());
    EXPECT_TRUE(find_flat_form_problems(lowered.func).empty());
    EXPECT_TRUE(computes_the_same(scheduled, lowered.func, seed)) << ir::print_function(lowered.func);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << ir::print_function(scheduled);
  }
}

// storage_align on the first write of every block that accepts it (intermediate
// buffers), with factors and offsets drawn from `seed`; returns how many succeeded.
int align_intermediate_buffers(schedule::Schedule& sch, uint64_t seed) {
  schedule::RandomEngine rng(static_cast<int64_t>(seed));
  int aligned = 0;
  for (schedule::BlockRV block : sch.get_child_blocks(sch.get_block("root"))) {
    int64_t factor = rng.uniform_int(2, 9);
    try {
      sch.storage_align(block, 0, rng.uniform_int(-2, 0), factor, rng.uniform_int(0, factor));
      ++aligned;
    } catch (const schedule::ScheduleError&) {
      // a parameter, or a rank-0 buffer: nothing to align
    }
  }
  return aligned;
}

TEST(LowerProperty, EveryOpUnderRandomCpuSchedulesLowersToTheSameResults) {
  const int kSchedulesPerOp = 5;
  RandomTraceStats stats;
  int checked = 0, aligned = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = testing::small_workload(op);
    for (int s = 0; s < kSchedulesPerOp; ++s) {
      schedule::Schedule sch = random_schedule(func, 97 * s + op.name.size(), style(TargetStyle::kCpu, 8), &stats);
      if (s % 2 == 1) aligned += align_intermediate_buffers(sch, s + op.name.size());  // padded strides
      SCOPED_TRACE(op.name + " schedule " + std::to_string(s) + ":\n" + sch.trace().to_string());
      lowers_to_the_same(sch.func(), 3 + s);
      ++checked;
    }
  }
  // Every op kind of the registry, none skipped.
  EXPECT_EQ(checked, static_cast<int>(ops::OpRegistry::global().kinds().size()) * kSchedulesPerOp);
  EXPECT_GT(aligned, 30);
  // The schedules must exercise what lowering cares about, not only loop primitives.
  for (const char* step : {"split", "cache_read", "cache_write", "compute_at", "reverse_compute_at",
                           "decompose_reduction", "rfactor", "compute_inline"}) {
    EXPECT_GT(stats.applied_by_step[step], 0) << step;
  }
  EXPECT_TRUE(stats.broken.empty());
}

// GPU-style schedules (thread bindings, shared caches, cooperative fetch) lowered for the
// CPU, where thread loops run serially: shared caches must stay above the thread loops.
TEST(LowerProperty, GpuStyleSchedulesLowerForTheCpuToTheSameResults) {
  RandomTraceStats stats;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = testing::small_workload(op);
    for (int s = 0; s < 2; ++s) {
      schedule::Schedule sch = random_schedule(func, 31 * s + op.name.size() * 5, style(TargetStyle::kGpu, 8), &stats);
      SCOPED_TRACE(op.name + " schedule " + std::to_string(s) + ":\n" + sch.trace().to_string());
      lowers_to_the_same(sch.func(), 4 + s);
    }
  }
  EXPECT_GT(stats.applied_by_step["cache_read"], 0);
  EXPECT_TRUE(stats.broken.empty());
}

// Each pass on its own: the function before and after it compute the same bytes.
TEST(LowerProperty, EveryPassPreservesResults) {
  std::map<std::string, int> changed;  // runs that changed the function, by pass
  int index = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = testing::small_workload(op);
    // Alternately CPU-style and mixed (GPU steps too) schedules.
    TargetStyle target_style = index++ % 2 == 0 ? TargetStyle::kCpu : TargetStyle::kAny;
    schedule::Schedule sch = random_schedule(func, 7 + op.name.size() * 13, style(target_style, 10));
    SCOPED_TRACE(op.name + ":\n" + sch.trace().to_string());
    std::vector<testing::Stage> stages;
    try {
      stages = testing::lower_stages(sch.func(), Target::cpu());
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    std::vector<tensor::HostTensor> inputs = interp::make_arguments(sch.func(), 11, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> before = testing::run_reshaped(stages[0].func, inputs);
    for (size_t i = 1; i < stages.size(); ++i) {
      if (!stages[i].changed) continue;
      ++changed[stages[i].pass];
      SCOPED_TRACE("pass " + stages[i].pass + "\nbefore:\n" + ir::print_function(stages[i - 1].func) + "after:\n" +
                   ir::print_function(stages[i].func));
      std::vector<tensor::HostTensor> after = testing::run_reshaped(stages[i].func, inputs);
      EXPECT_TRUE(testing::same_bytes(sch.func(), before, after));
      before = std::move(after);
    }
  }
  // Every pass had work to do somewhere (so each was checked on real cases).
  for (const char* pass : {"lower_reduction_init", "plan_buffer_allocation", "lower_blocks", "simplify_func",
                           "compact_buffers", "serialize_thread_loops", "unroll_loops", "flatten_buffers"}) {
    EXPECT_GE(changed[pass], 3) << pass;
  }
}

}  // namespace
}  // namespace dragon::lower
