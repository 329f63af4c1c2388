// lower_cross_thread_reduction: a softmax whose row max and row sum are reduced by 32
// threads (MetaSchedule's CrossThreadReduction shape: the reduce loop split [rest, 32],
// the inner part bound to threadIdx.x). On block IR the pass keeps the interpreter's
// results (the sum reassociated: within rounding); lowered for the H200 the tree steps
// are separated by barriers. Also the cases it refuses, with their messages.
#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "barrier_simulator.h"
#include "gpu_test_util.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::lower {
namespace {

using schedule::LoopRV;
using schedule::None;
using schedule::Schedule;
using schedule::testing::has_line;
using schedule::testing::same_outputs;
using schedule::testing::workload;

// Rows on blockIdx.x; the two reductions over 32 threads, the elementwise stages over
// 32 threads too.
Schedule softmax_schedule(const char* spec = "softmax:shape=4x64") {
  Schedule sch(workload(spec));
  for (const char* name : {"x_max", "x_exp", "exp_sum", "softmax"}) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
    sch.bind(loops[0], "blockIdx.x");
    std::vector<LoopRV> split = sch.split(loops[1], {None{}, int64_t{32}});
    sch.bind(split[1], "threadIdx.x");
  }
  return sch;
}

TEST(CrossThreadReduction, KeepsTheResultsOnBlockIr) {
  Schedule sch = softmax_schedule();
  ir::PrimFunc lowered = lower_cross_thread_reduction(sch.func(), Target::cuda_h200());
  ASSERT_FALSE(lowered.same_as(sch.func()));
  std::string text = ir::print_function(lowered);
  // Per-thread partials, a shared row of 32 partials, 5 tree steps, one write-back.
  EXPECT_TRUE(has_line(text, "alloc x_max_partial: f32[1] local")) << text;
  EXPECT_TRUE(has_line(text, "alloc x_max_red: f32[32] shared")) << text;
  for (const char* step : {"x_max_tree_16", "x_max_tree_8", "x_max_tree_4", "x_max_tree_2", "x_max_tree_1",
                           "exp_sum_tree_1", "exp_sum_in_thread", "exp_sum_to_shared"}) {
    EXPECT_NE(text.find(std::string("block ") + step), std::string::npos) << step << "\n" << text;
  }
  EXPECT_TRUE(same_outputs(sch.func(), lowered, 7, /*exact=*/false));
  EXPECT_TRUE(same_outputs(workload("softmax:shape=4x64"), lowered, 8, /*exact=*/false));
}

TEST(CrossThreadReduction, ThreadCountsThatAreNotPowersOfTwo) {
  // 24 threads: the tree starts at stride 16 and guards t + 16 < 24.
  Schedule sch(workload("sum:shape=3x48x5,axis=1"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("sum"));
  sch.bind(loops[0], "blockIdx.x");
  sch.bind(loops[1], "threadIdx.y");
  std::vector<LoopRV> split = sch.split(loops[2], {None{}, int64_t{24}});
  sch.bind(split[1], "threadIdx.x");
  ir::PrimFunc lowered = lower_cross_thread_reduction(sch.func(), Target::cuda_h200());
  std::string text = ir::print_function(lowered);
  EXPECT_TRUE(has_line(text, "alloc sum_red: f32[5, 24] shared")) << text;  // one row per threadIdx.y
  EXPECT_NE(text.find("block sum_tree_16"), std::string::npos) << text;
  EXPECT_TRUE(same_outputs(sch.func(), lowered, 3, /*exact=*/false));
  EXPECT_NO_THROW(lower(sch.func(), Target::cuda_h200()));
}

TEST(CrossThreadReduction, LowersToKernelsWithBarriersBetweenTreeSteps) {
  Schedule sch = softmax_schedule();
  ir::PrimFunc lowered = lower(sch.func(), Target::cuda_h200()).func;
  std::string text = ir::print_function(lowered);
  // Per reduction: one barrier after publishing the partials, one after each of the 5
  // tree steps (the last before the write-back reads slot 0): 6 each, 12 in all.
  EXPECT_EQ(testing::count_syncs(lowered->body), 12) << text;
  EXPECT_EQ(text, R"(func softmax(in X: f32[256], out softmax: f32[256]) {
  alloc x_max: f32[4] {
    alloc x_exp: f32[256] {
      alloc exp_sum: f32[4] {
        for blockIdx_x in 4 bind blockIdx.x {
          for threadIdx_x in 32 bind threadIdx.x {
            alloc x_max_red: f32[32] shared {
              alloc x_max_partial: f32[1] local {
                x_max_partial[0] = -inff32
                for r0_0 in 2 {
                  x_max_partial[0] = max(x_max_partial[0], X[blockIdx_x * 64 + r0_0 * 32 + threadIdx_x])
                }
                x_max_red[threadIdx_x] = x_max_partial[0]
                eval sync_threads()
                if (threadIdx_x < 16) {
                  x_max_red[threadIdx_x] = max(x_max_red[threadIdx_x], x_max_red[threadIdx_x + 16])
                }
                eval sync_threads()
                if (threadIdx_x < 8) {
                  x_max_red[threadIdx_x] = max(x_max_red[threadIdx_x], x_max_red[threadIdx_x + 8])
                }
                eval sync_threads()
                if (threadIdx_x < 4) {
                  x_max_red[threadIdx_x] = max(x_max_red[threadIdx_x], x_max_red[threadIdx_x + 4])
                }
                eval sync_threads()
                if (threadIdx_x < 2) {
                  x_max_red[threadIdx_x] = max(x_max_red[threadIdx_x], x_max_red[threadIdx_x + 2])
                }
                eval sync_threads()
                if (threadIdx_x < 1) {
                  x_max_red[threadIdx_x] = max(x_max_red[threadIdx_x], x_max_red[threadIdx_x + 1])
                }
                eval sync_threads()
                if (threadIdx_x == 0) {
                  x_max[blockIdx_x] = x_max_red[0]
                }
              }
            }
          }
        }
        for blockIdx_x in 4 bind blockIdx.x {
          for threadIdx_x in 32 bind threadIdx.x {
            for i1_0 in 2 {
              x_exp[blockIdx_x * 64 + i1_0 * 32 + threadIdx_x] = exp(X[blockIdx_x * 64 + i1_0 * 32 + threadIdx_x] - x_max[blockIdx_x])
            }
          }
        }
        for blockIdx_x in 4 bind blockIdx.x {
          for threadIdx_x in 32 bind threadIdx.x {
            alloc exp_sum_red: f32[32] shared {
              alloc exp_sum_partial: f32[1] local {
                exp_sum_partial[0] = 0f32
                for r0_0 in 2 {
                  exp_sum_partial[0] = exp_sum_partial[0] + x_exp[blockIdx_x * 64 + r0_0 * 32 + threadIdx_x]
                }
                exp_sum_red[threadIdx_x] = exp_sum_partial[0]
                eval sync_threads()
                if (threadIdx_x < 16) {
                  exp_sum_red[threadIdx_x] = exp_sum_red[threadIdx_x] + exp_sum_red[threadIdx_x + 16]
                }
                eval sync_threads()
                if (threadIdx_x < 8) {
                  exp_sum_red[threadIdx_x] = exp_sum_red[threadIdx_x] + exp_sum_red[threadIdx_x + 8]
                }
                eval sync_threads()
                if (threadIdx_x < 4) {
                  exp_sum_red[threadIdx_x] = exp_sum_red[threadIdx_x] + exp_sum_red[threadIdx_x + 4]
                }
                eval sync_threads()
                if (threadIdx_x < 2) {
                  exp_sum_red[threadIdx_x] = exp_sum_red[threadIdx_x] + exp_sum_red[threadIdx_x + 2]
                }
                eval sync_threads()
                if (threadIdx_x < 1) {
                  exp_sum_red[threadIdx_x] = exp_sum_red[threadIdx_x] + exp_sum_red[threadIdx_x + 1]
                }
                eval sync_threads()
                if (threadIdx_x == 0) {
                  exp_sum[blockIdx_x] = exp_sum_red[0]
                }
              }
            }
          }
        }
        for blockIdx_x in 4 bind blockIdx.x {
          for threadIdx_x in 32 bind threadIdx.x {
            for i1_0 in 2 {
              softmax[blockIdx_x * 64 + i1_0 * 32 + threadIdx_x] = x_exp[blockIdx_x * 64 + i1_0 * 32 + threadIdx_x] / exp_sum[blockIdx_x]
            }
          }
        }
      }
    }
  }
}
)");
}

TEST(CrossThreadReduction, TheKernelsComputeTheSoftmaxUnderBarrierSemantics) {
  for (const char* spec : {"softmax:shape=4x64", "softmax:shape=3x80"}) {
    SCOPED_TRACE(spec);
    Schedule sch = softmax_schedule(spec);
    ir::PrimFunc kernels = lower(sch.func(), Target::cuda_h200()).func;
    EXPECT_TRUE(testing::close_outputs(sch.func(), testing::serialize_between_barriers(kernels)));
    EXPECT_FALSE(testing::close_outputs(sch.func(), testing::serialize_between_barriers(kernels, true)));
  }
}

TEST(CrossThreadReduction, RefusesWhatItCannotLower) {
  // A thread loop feeding a reduction whose update is not C = C op x.
  Schedule sch(workload("softmax:shape=2x64"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("x_max"));
  std::vector<LoopRV> split = sch.split(loops[1], {None{}, int64_t{32}});
  sch.bind(split[0], "threadIdx.x");
  sch.bind(split[1], "threadIdx.y");
  try {
    lower_cross_thread_reduction(sch.func(), Target::cuda_h200());
    FAIL() << "two thread axes reducing one block were accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("more than one thread axis feeds the reduction"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dragon::lower
