// verify_gpu_code: each H200 limit (threads per block, blocks per grid dimension, shared
// memory per block, virtual threads, vector width) refused with a message naming the limit, the value and the
// kernel; code within the limits passes. Also the other kernel-form passes' checks
// (unify_thread_bindings, plan_gpu_allocations) and their messages.
#include <gtest/gtest.h>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "barrier_simulator.h"
#include "gpu_test_util.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower {
namespace {

// The message of the UserError `f` throws, or "" (a failure) when it throws none.
template <typename F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

ir::PrimFunc parse(const std::string& text) { return ir::parse_function(text); }

const Target kH200 = Target::cuda_h200();

TEST(VerifyGpuCode, AcceptsCodeWithinTheLimits) {
  ir::PrimFunc f = parse(R"(func ok(in A: f32[1024], out B: f32[1024]) {
  for blockIdx_x in 4 bind blockIdx.x {
    for threadIdx_x in 256 bind threadIdx.x {
      alloc S: f32[58112] shared {
        S[threadIdx_x] = A[blockIdx_x * 256 + threadIdx_x]
        B[blockIdx_x * 256 + threadIdx_x] = S[threadIdx_x]
      }
    }
  }
}
)");
  EXPECT_NO_THROW(verify_gpu_code(f, kH200));  // 58112 * 4 = 232448 bytes: exactly the limit
}

TEST(VerifyGpuCode, GridsPastCudasDimensions) {
  ir::PrimFunc tall = parse(R"(func tall(in A: f32[2097152], out B: f32[2097152]) {
  for blockIdx_y in 65536 bind blockIdx.y {
    for threadIdx_x in 32 bind threadIdx.x {
      B[blockIdx_y * 32 + threadIdx_x] = A[blockIdx_y * 32 + threadIdx_x]
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { verify_gpu_code(tall, kH200); }),
            "kernel 0 of function 'tall' launches a grid of 65536 blocks along blockIdx.y, above the limit of 65535 "
            "(CUDA's grid dimensions)");
  ir::PrimFunc wide = parse(R"(func wide(in A: f32[2097152], out B: f32[2097152]) {
  for blockIdx_x in 65536 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      B[blockIdx_x * 32 + threadIdx_x] = A[blockIdx_x * 32 + threadIdx_x]
    }
  }
}
)");
  EXPECT_NO_THROW(verify_gpu_code(wide, kH200));
}

TEST(VerifyGpuCode, TooManyThreadsPerBlock) {
  ir::PrimFunc f = parse(R"(func wide(in A: f32[2048], out B: f32[2048]) {
  for threadIdx_y in 32 bind threadIdx.y {
    for threadIdx_x in 64 bind threadIdx.x {
      B[threadIdx_y * 64 + threadIdx_x] = A[threadIdx_y * 64 + threadIdx_x]
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { verify_gpu_code(f, kH200); }),
            "kernel 0 of function 'wide' launches 2048 threads per block (threadIdx.x=64 x threadIdx.y=32), above "
            "the limit max_threads_per_block = 1024");
}

TEST(VerifyGpuCode, TooMuchSharedMemory) {
  ir::PrimFunc f = parse(R"(func big(in A: f32[64], out B: f32[64]) {
  for threadIdx_x in 64 bind threadIdx.x {
    B[threadIdx_x] = A[threadIdx_x]
  }
  for threadIdx_x in 64 bind threadIdx.x {
    alloc S: f32[40000] shared {
      alloc T: f32[20000] shared {
        S[threadIdx_x] = A[threadIdx_x]
        T[threadIdx_x] = S[threadIdx_x]
        B[threadIdx_x] = T[threadIdx_x]
      }
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { verify_gpu_code(f, kH200); }),
            "kernel 1 of function 'big' uses 240000 bytes of shared memory per block, above the limit "
            "max_shared_memory_per_block = 232448");
}

TEST(VerifyGpuCode, TooManyVirtualThreadsBeforeAndAfterInjection) {
  ir::PrimFunc f = parse(R"(func virt(in A: f32[512], out B: f32[512]) {
  for threadIdx_x in 32 bind threadIdx.x {
    for v in 16 bind vthread.x {
      B[v * 32 + threadIdx_x] = A[v * 32 + threadIdx_x]
    }
  }
}
)");
  std::string expected =
      "kernel 0 of function 'virt' runs 16 virtual threads per thread, above the limit max_vthreads = 8";
  EXPECT_EQ(user_error([&] { verify_gpu_code(f, kH200); }), expected);
  ir::PrimFunc injected = inject_virtual_threads(f);
  ASSERT_EQ(ir::print_function(injected).find("bind vthread"), std::string::npos);
  EXPECT_TRUE(testing::computes_the_same(f, injected));
  EXPECT_EQ(user_error([&] { verify_gpu_code(injected, kH200); }), expected);
}

TEST(VerifyGpuCode, VectorsWiderThan16Bytes) {
  ir::PrimFunc f = parse(R"(func vec(in A: f32[256], out B: f32[256]) {
  for threadIdx_x in 32 bind threadIdx.x {
    for v in 8 vectorized {
      B[threadIdx_x * 8 + v] = A[threadIdx_x * 8 + v]
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { verify_gpu_code(f, kH200); }),
            "kernel 0 of function 'vec': vectorized loop 'v' accessing 'B' (f32) moves 32 bytes per vector access, "
            "above the limit max_vector_bytes = 16");
  // Four f32 lanes are 16 bytes: fine.
  ir::PrimFunc narrow = parse(R"(func vec(in A: f32[256], out B: f32[256]) {
  for threadIdx_x in 64 bind threadIdx.x {
    for v in 4 vectorized {
      B[threadIdx_x * 4 + v] = A[threadIdx_x * 4 + v]
    }
  }
}
)");
  EXPECT_NO_THROW(verify_gpu_code(narrow, kH200));
}

TEST(VerifyGpuCode, LowerRefusesWhatTheTargetCannotRun) {
  // Through the whole pipeline: an op scheduled with 2048 threads per block.
  ir::PrimFunc f = parse(R"(func wide(in A: f32[2048], out B: f32[2048]) {
  for threadIdx_y in 32 bind threadIdx.y {
    for threadIdx_x in 64 bind threadIdx.x {
      B[threadIdx_y * 64 + threadIdx_x] = A[threadIdx_y * 64 + threadIdx_x]
    }
  }
}
)");
  std::string message = user_error([&] { lower(f, kH200); });
  EXPECT_NE(message.find("max_threads_per_block = 1024"), std::string::npos) << message;
}

TEST(UnifyThreadBindings, LoopsOfOneTagShareTheLaunchVariableWithGuards) {
  ir::PrimFunc f = parse(R"(func two(in A: f32[64], out B: f32[64]) {
  for bx in 2 bind blockIdx.x {
    for tx in 32 bind threadIdx.x {
      B[bx * 32 + tx] = A[bx * 32 + tx]
    }
    for t2 in 16 bind threadIdx.x {
      B[bx * 32 + t2] = B[bx * 32 + t2] * 2f32
    }
  }
}
)");
  ir::PrimFunc g = unify_thread_bindings(f, kH200);
  EXPECT_TRUE(unify_thread_bindings(g, kH200).same_as(g)) << "a second run changes nothing";
  EXPECT_EQ(ir::print_function(g), R"(func two(in A: f32[64], out B: f32[64]) {
  for blockIdx_x in 2 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      B[blockIdx_x * 32 + threadIdx_x] = A[blockIdx_x * 32 + threadIdx_x]
      if (threadIdx_x < 16) {
        B[blockIdx_x * 32 + threadIdx_x] = B[blockIdx_x * 32 + threadIdx_x] * 2f32
      }
    }
  }
}
)");
}

// A grid taller than the target allows along y (here a target of 4 rows of blocks, CUDA's
// being 65535) becomes one blockIdx.x loop over all its blocks, each former index read off
// it (x fastest, as before); the kernel computes the same, and a second run changes
// nothing. A grid within the limits keeps its shape.
TEST(UnifyThreadBindings, AGridTooTallAlongYIsFoldedIntoX) {
  ir::PrimFunc f = parse(R"(func tall(in A: f32[64], out B: f32[64]) {
  for by in 8 bind blockIdx.y {
    for bx in 2 bind blockIdx.x {
      for tx in 4 bind threadIdx.x {
        B[by * 8 + bx * 4 + tx] = A[by * 8 + bx * 4 + tx] * 2f32
      }
    }
  }
}
)");
  Target short_grid = kH200;
  short_grid.max_grid_y = 4;
  ir::PrimFunc g = unify_thread_bindings(f, short_grid);
  EXPECT_TRUE(unify_thread_bindings(g, short_grid).same_as(g)) << "a second run changes nothing";
  EXPECT_EQ(ir::print_function(g), R"(func tall(in A: f32[64], out B: f32[64]) {
  for blockIdx_x in 16 bind blockIdx.x {
    for tx in 4 bind threadIdx.x {
      B[blockIdx_x // 2 % 8 * 8 + blockIdx_x % 2 * 4 + tx] = A[blockIdx_x // 2 % 8 * 8 + blockIdx_x % 2 * 4 + tx] * 2f32
    }
  }
}
)");
  EXPECT_TRUE(testing::close_outputs(f, g));
  EXPECT_NE(ir::print_function(unify_thread_bindings(f, kH200)).find("bind blockIdx.y"), std::string::npos);
}

TEST(UnifyThreadBindings, UnboundNestsAndKernelsInsideLoopsAreUserErrors) {
  ir::PrimFunc unbound = parse(R"(func loose(in A: f32[8], out B: f32[8]) {
  for i in 8 {
    B[i] = A[i]
  }
}
)");
  EXPECT_EQ(user_error([&] { unify_thread_bindings(unbound, kH200); }),
            "function 'loose': the loop nest of 'i' writing 'B' is not bound to GPU threads; bind its loops to "
            "blockIdx/threadIdx (search::auto_bind gives every block a default binding)");
  ir::PrimFunc looped = parse(R"(func looped(in A: f32[64], out B: f32[64]) {
  for i in 2 {
    for bx in 32 bind blockIdx.x {
      B[i * 32 + bx] = A[i * 32 + bx]
    }
  }
}
)");
  std::string message = user_error([&] { unify_thread_bindings(looped, kH200); });
  EXPECT_NE(message.find("loop 'i' (extent 2) encloses loops bound to blockIdx"), std::string::npos) << message;
}

TEST(UnifyThreadBindings, RefusesWhatNoKernelCanRun) {
  // A shared cache filled by one kernel and read by another.
  ir::PrimFunc shared_across = parse(R"(func across(in A: f32[64], out B: f32[64]) {
  alloc S: f32[64] shared {
    for bx in 2 bind blockIdx.x {
      for tx in 32 bind threadIdx.x {
        S[bx * 32 + tx] = A[bx * 32 + tx]
      }
    }
    for bx2 in 2 bind blockIdx.x {
      for tx2 in 32 bind threadIdx.x {
        B[bx2 * 32 + tx2] = S[bx2 * 32 + tx2]
      }
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { unify_thread_bindings(shared_across, kH200); }),
            "function 'across': buffer 'S' (shared) is used by several loop nests bound to blockIdx (several "
            "kernels); shared memory lives in one kernel: compute it at a loop of its consumer's kernel "
            "(compute_at), or give it global scope");
  // Nested loops of one tag are one index: fine for a copy that ignores the outer one,
  // not for a nest that uses it.
  ir::PrimFunc nested = parse(R"(func nested(in A: f32[64], out B: f32[64]) {
  for bx in 2 bind blockIdx.x {
    for tx in 32 bind threadIdx.x {
      for tx2 in 32 bind threadIdx.x {
        B[bx * 32 + tx2] = A[bx * 32 + tx] + A[bx * 32 + tx2]
      }
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { unify_thread_bindings(nested, kH200); }),
            "kernel 0 of function 'nested': loop 'tx2' bound to threadIdx.x lies inside loop 'tx' bound to the same "
            "tag and uses its variable; nested loops of one tag are one hardware index");
}

TEST(UnifyThreadBindings, BlockLevelStoresRunOnThreadZero) {
  // The row sum is block-level code (under no threadIdx loop) in a kernel of 32 threads:
  // stored once per block, by thread 0, after a barrier.
  ir::PrimFunc f = parse(R"(func rows(in A: f32[64], out B: f32[2]) {
  for bx in 2 bind blockIdx.x {
    alloc S: f32[32] shared {
      for tx in 32 bind threadIdx.x {
        S[tx] = A[bx * 32 + tx]
      }
      B[bx] = S[0] + S[31]
    }
  }
}
)");
  ir::PrimFunc g = insert_thread_syncs(plan_gpu_allocations(unify_thread_bindings(f, kH200)));
  std::string text = ir::print_function(g);
  EXPECT_TRUE(testing::has_exact_line(text, "if (threadIdx_x == 0) {")) << text;
  EXPECT_EQ(testing::count_syncs(g->body), 1) << text;
  EXPECT_TRUE(testing::computes_the_same(f, testing::serialize_between_barriers(g)));
}

TEST(UnifyThreadBindings, PerThreadMemoryCannotPassValuesBetweenThreads) {
  ir::PrimFunc f = parse(R"(func pass(in A: f32[64], out B: f32[2]) {
  for bx in 2 bind blockIdx.x {
    alloc L: f32[32] local {
      for tx in 32 bind threadIdx.x {
        L[tx] = A[bx * 32 + tx]
      }
      B[bx] = L[0] + L[31]
    }
  }
}
)");
  EXPECT_EQ(user_error([&] { unify_thread_bindings(f, kH200); }),
            "kernel 0 of function 'pass': buffer 'L' (local) is written under loops bound to threadIdx and read "
            "outside them; per-thread memory cannot pass values between threads (give it shared scope, or compute "
            "its reader under the same thread loop)");
}

TEST(UnifyThreadBindings, GlobalBuffersInsideAKernelMoveOutWithACopyPerBlock) {
  // A global intermediate allocated under blockIdx (computed at the bound loop): one copy
  // per block outside the kernel.
  ir::PrimFunc f = parse(R"(func inner(in A: f32[64], out B: f32[64]) {
  for bx in 2 bind blockIdx.x {
    alloc T: f32[32] global {
      for tx in 32 bind threadIdx.x {
        T[tx] = A[bx * 32 + tx] * 2f32
      }
      for tx2 in 32 bind threadIdx.x {
        B[bx * 32 + tx2] = T[tx2]
      }
    }
  }
}
)");
  ir::PrimFunc g = unify_thread_bindings(f, kH200);
  EXPECT_EQ(ir::print_function(g), R"(func inner(in A: f32[64], out B: f32[64]) {
  alloc T: f32[64] {
    for blockIdx_x in 2 bind blockIdx.x {
      for threadIdx_x in 32 bind threadIdx.x {
        T[blockIdx_x * 32 + threadIdx_x] = A[blockIdx_x * 32 + threadIdx_x] * 2f32
        B[blockIdx_x * 32 + threadIdx_x] = T[blockIdx_x * 32 + threadIdx_x]
      }
    }
  }
}
)");
  EXPECT_TRUE(testing::computes_the_same(f, simplify_func(g)));
}

TEST(PlanGpuAllocations, HoistsSharedThenLocalToTheKernelTopAndRenamesClashes) {
  ir::PrimFunc f = parse(R"(func alloc(in A: f32[64], out B: f32[64]) {
  for blockIdx_x in 2 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      for k in 2 {
        alloc L: f32[1] local {
          L[0] = A[blockIdx_x * 32 + threadIdx_x]
          alloc S: f32[32] shared {
            S[threadIdx_x] = L[0]
            B[blockIdx_x * 32 + threadIdx_x] = S[threadIdx_x]
          }
        }
        alloc S: f32[32] shared {
          S[threadIdx_x] = B[blockIdx_x * 32 + threadIdx_x]
          B[blockIdx_x * 32 + threadIdx_x] = S[threadIdx_x] + 1f32
        }
      }
    }
  }
}
)");
  ir::PrimFunc g = plan_gpu_allocations(f);
  EXPECT_EQ(ir::print_function(g), R"(func alloc(in A: f32[64], out B: f32[64]) {
  for blockIdx_x in 2 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      alloc S: f32[32] shared {
        alloc S_1: f32[32] shared {
          alloc L: f32[1] local {
            for k in 2 {
              L[0] = A[blockIdx_x * 32 + threadIdx_x]
              S[threadIdx_x] = L[0]
              B[blockIdx_x * 32 + threadIdx_x] = S[threadIdx_x]
              S_1[threadIdx_x] = B[blockIdx_x * 32 + threadIdx_x]
              B[blockIdx_x * 32 + threadIdx_x] = S_1[threadIdx_x] + 1f32
            }
          }
        }
      }
    }
  }
}
)");
  EXPECT_TRUE(testing::computes_the_same(f, g));
  EXPECT_TRUE(plan_gpu_allocations(g).same_as(g)) << "a second run changes nothing";
}

}  // namespace
}  // namespace dragon::lower
