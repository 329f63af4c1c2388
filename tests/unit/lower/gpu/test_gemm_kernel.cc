// The MetaSchedule GEMM sketch (gemm_sketch.h) lowered for the H200: the kernel form's
// golden text (launch nest, hoisted shared and local buffers, barriers around the shared
// tiles in the k loop, virtual threads interleaved), and each GPU pass on its own.
#include <gtest/gtest.h>


#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "barrier_simulator.h"
#include "gpu_test_util.h"
#include "unit/lower/lower_test_util.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::lower {
namespace {

// The sketch plus what MetaSchedule's RewriteCooperativeFetch postprocessor does to each
// shared copy: its fused loop split [rest, 32 threads, vector length] (2 for A, 4 for B,
// the sketch's decisions), the middle bound to threadIdx.x and the inner vectorized.
schedule::Schedule gemm_sketch() {
  schedule::Schedule sch(schedule::testing::workload("matmul:m=64,n=64,k=64"));
  schedule::testing::apply_gemm_sketch(sch);
  for (auto [name, vector] : {std::pair<const char*, int64_t>{"A_shared", 2}, {"B_shared", 4}}) {
    std::vector<schedule::LoopRV> loops = sch.get_loops(sch.get_block(name));
    std::vector<schedule::LoopRV> split = sch.split(loops.back(), {schedule::None{}, int64_t{32}, vector});
    sch.bind(split[1], "threadIdx.x");
    sch.vectorize(split[2]);
  }
  return sch;
}

TEST(GemmKernel, GoldenKernelForm) {
  schedule::Schedule sch = gemm_sketch();
  Lowered lowered = lower(sch.func(), Target::cuda_h200());
  // One kernel: 8 blocks of 32 threads; the shared tiles and the local accumulator (two
  // virtual threads' worth, 2 x 8) declared at the top; per k step a barrier before the
  // tiles are overwritten and one before they are read; the cooperative copies use the
  // kernel's threadIdx.x; the virtual threads interleave as unrolled loops innermost.
  EXPECT_EQ(ir::print_function(lowered.func), R"(func matmul(in A: f32[4096], in B: f32[4096], out C: f32[4096]) {
  for blockIdx_x in 8 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      alloc A_shared: f32[256] shared {
        alloc B_shared: f32[128] shared {
          alloc C_local: f32[16] local {
            for r0_0 in 8 {
              eval sync_threads()
              for ax0_1_ax1_1_fused_0 in 4 {
                for ax0_1_ax1_1_fused_2 in 2 vectorized {
                  A_shared[ax0_1_ax1_1_fused_0 * 64 + ax0_1_ax1_1_fused_2 + threadIdx_x * 2] = A[blockIdx_x // 4 * 2048 + ax0_1_ax1_1_fused_0 * 512 + threadIdx_x // 4 * 64 + r0_0 * 8 + threadIdx_x % 4 * 2 + ax0_1_ax1_1_fused_2]
                }
              }
              for ax0_1_ax1_1_fused_0 in 1 {
                for ax0_1_ax1_1_fused_2 in 4 vectorized {
                  B_shared[ax0_1_ax1_1_fused_2 + threadIdx_x * 4] = B[r0_0 * 512 + threadIdx_x // 4 * 64 + blockIdx_x % 4 * 16 + threadIdx_x % 4 * 4 + ax0_1_ax1_1_fused_2]
                }
              }
              eval sync_threads()
              for r0_1 in 2 {
                for i0_3 in 2 {
                  for i1_3 in 1 {
                    for r0_2 in 4 {
                      for i0_4 in 2 {
                        for i1_4 in 2 {
                          if (r0_0 * 8 + r0_1 * 4 + r0_2 == 0) {
                            for i0_1_i1_1_fused in 2 unrolled @{virtual_thread = "vthread.x"} {
                              C_local[i0_1_i1_1_fused * 8 + i0_3 * 4 + i0_4 * 2 + i1_4] = 0f32
                            }
                          }
                          for i0_1_i1_1_fused in 2 unrolled @{virtual_thread = "vthread.x"} {
                            C_local[i0_1_i1_1_fused * 8 + i0_3 * 4 + i0_4 * 2 + i1_4] = C_local[i0_1_i1_1_fused * 8 + i0_3 * 4 + i0_4 * 2 + i1_4] + A_shared[threadIdx_x // 4 * 32 + i0_3 * 16 + i0_4 * 8 + r0_1 * 4 + r0_2] * B_shared[r0_1 * 64 + r0_2 * 16 + i0_1_i1_1_fused * 8 + threadIdx_x % 4 * 2 + i1_4]
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
            for ax0 in 4 {
              for ax1 in 2 {
                for i0_1_i1_1_fused in 2 unrolled @{virtual_thread = "vthread.x"} {
                  C[blockIdx_x // 4 * 2048 + threadIdx_x // 4 * 256 + ax0 * 64 + blockIdx_x % 4 * 16 + i0_1_i1_1_fused * 8 + threadIdx_x % 4 * 2 + ax1] = C_local[i0_1_i1_1_fused * 8 + ax0 * 2 + ax1]
                }
              }
            }
          }
        }
      }
    }
  }
}
)");
  EXPECT_EQ(testing::count_syncs(lowered.func->body), 2);
}

TEST(GemmKernel, TheKernelComputesTheGemmUnderBarrierSemantics) {
  // Threads run one after another between barriers: the cooperative copies then really
  // feed other threads, so a missing barrier would show. Lowering keeps the arithmetic
  // order of every element: bit for bit.
  schedule::Schedule sch = gemm_sketch();
  ir::PrimFunc kernel = lower(sch.func(), Target::cuda_h200()).func;
  EXPECT_TRUE(testing::computes_the_same(sch.func(), testing::serialize_between_barriers(kernel), 11));
  // Without its barriers the same kernel reads tiles before they are filled.
  EXPECT_FALSE(testing::computes_the_same(sch.func(), testing::serialize_between_barriers(kernel, true), 11));
}

TEST(GemmKernel, VirtualThreadInjectionKeepsTheResults) {
  schedule::Schedule sch = gemm_sketch();
  // Before the injection the function is block-free and still has its vthread loop; the
  // interpreter runs it (thread loops serially) before and after, bit for bit: the
  // virtual threads own disjoint parts of C_local and C.
  ir::PrimFunc before = testing::gpu_stage(sch.func(), "flatten_buffers");
  ir::PrimFunc after = inject_virtual_threads(before);
  ASSERT_FALSE(after.same_as(before));
  EXPECT_TRUE(testing::computes_the_same(before, after, 3));
  EXPECT_TRUE(testing::computes_the_same(sch.func(), after, 4));
  std::string text = ir::print_function(after);
  EXPECT_EQ(text.find("bind vthread.x"), std::string::npos) << text;
  // C_local gets a copy per virtual thread; the shared tiles, filled alike by both, not.
  EXPECT_TRUE(schedule::testing::has_line(text, "alloc C_local: f32[16] local {")) << text;
  EXPECT_TRUE(schedule::testing::has_line(text, "alloc A_shared: f32[256] shared {")) << text;
  EXPECT_NE(text.find("unrolled @{virtual_thread = \"vthread.x\"}"), std::string::npos) << text;
}

TEST(GemmKernel, UnifiedBindingsFormOneLaunchNest) {
  schedule::Schedule sch = gemm_sketch();
  ir::PrimFunc unified = testing::gpu_stage(sch.func(), "unify_thread_bindings");
  const auto* bx = unified->body.as<ir::ForNode>();
  ASSERT_NE(bx, nullptr);
  EXPECT_EQ(bx->thread_tag, "blockIdx.x");
  EXPECT_TRUE(ir::is_const_int(bx->extent, 8));
  const auto* tx = bx->body.as<ir::ForNode>();
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->thread_tag, "threadIdx.x");
  EXPECT_TRUE(ir::is_const_int(tx->extent, 32));
  // Every other threadIdx.x loop (the two cooperative copies) became the launch variable.
  std::string text = ir::print_function(unified);
  size_t first = text.find("bind threadIdx.x");
  EXPECT_EQ(text.find("bind threadIdx.x", first + 1), std::string::npos) << text;
}

}  // namespace
}  // namespace dragon::lower
