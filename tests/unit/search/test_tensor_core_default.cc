// The default schedule's tensor-core tiling (space/tensor_core_default.h): the ranked tiles
// divide their extents, keep the innermost pieces and a lane's accumulators within bounds
// and put 64 x 64 warp tiles first where the shape allows; GEMMs, batched GEMMs and
// convolutions (f32, f16, bf16; padded, transposed) are scheduled on tensor cores by
// default, compute what the op computes (on the interpreter, and lowered, thread by
// thread between barriers) and replay; the default leaves GEMMs of a K too long for it,
// and everything when told not to, to the CUDA-core default.
#include <gtest/gtest.h>

#include <numeric>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/schedule/instruction.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/tensor_core_default.h"
#include "unit/lower/gpu/barrier_simulator.h"
#include "unit/lower/gpu/gpu_test_util.h"
#include "unit/lower/lower_test_util.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

using schedule::Schedule;
using schedule::testing::workload;

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

size_t tensorize_count(const Schedule& sch) {
  size_t n = 0;
  for (const schedule::Instruction& inst : sch.trace().instructions()) {
    n += inst.kind == schedule::InstructionKind::Tensorize ? 1 : 0;
  }
  return n;
}

TEST(TensorCoreDefault, RankedTilesDivideTheirExtentsWithinBounds) {
  struct Shape {
    int64_t i, j, k;
  };
  // 4096^3 in mma tiles; KernelBench 55's conv (m = 4,169,760 = 16 * 2 * 3 * 5 * 7 * 17 *
  // 73); a thin one; primes.
  for (Shape s : {Shape{256, 512, 512}, Shape{260610, 16, 72}, Shape{4, 2, 3}, Shape{13, 17, 7}}) {
    SCOPED_TRACE(std::to_string(s.i) + " x " + std::to_string(s.j) + " x " + std::to_string(s.k));
    std::vector<TensorCoreTiles> ranked = ranked_tensor_core_tiles(s.i, s.j, s.k, 4, 4, 132, 8);
    ASSERT_FALSE(ranked.empty());
    for (const TensorCoreTiles& t : ranked) {
      ASSERT_EQ(t.i.size(), 5u);
      ASSERT_EQ(t.j.size(), 5u);
      ASSERT_EQ(t.k.size(), 3u);
      EXPECT_EQ(product(t.i), s.i);
      EXPECT_EQ(product(t.j), s.j);
      EXPECT_EQ(product(t.k), s.k);
      EXPECT_LE(t.i[4], 4);
      EXPECT_LE(t.j[4], 4);
      EXPECT_EQ(t.k[2], 1);  // fragments of one k-step
      EXPECT_LE(t.i[2] * t.j[2], 8);                                  // warps
      EXPECT_LE(t.i[3] * t.i[4] * 16 * t.j[3] * t.j[4] * 8 / 32, 128);  // a lane's accumulators
    }
  }
  // 4096^3: warp tiles of 64 x 64, 2 x 2 warps, 4 mma k-steps (32 elements) a stage.
  const TensorCoreTiles best = ranked_tensor_core_tiles(256, 512, 512, 4, 4, 132, 1).at(0);
  EXPECT_EQ(best.i, (std::vector<int64_t>{32, 1, 2, 1, 4}));
  EXPECT_EQ(best.j, (std::vector<int64_t>{32, 1, 2, 2, 4}));
  EXPECT_EQ(best.k, (std::vector<int64_t>{128, 4, 1}));
  // A small GEMM: smaller tiles, so that its blocks fill more of the GPU.
  const TensorCoreTiles small = ranked_tensor_core_tiles(16, 32, 32, 4, 4, 132, 1).at(0);
  EXPECT_LT(small.i[2] * small.i[3] * small.i[4] * small.j[2] * small.j[3] * small.j[4], 8 * 16);
  // Not weighing the fill keeps the 64 x 64 warps.
  const TensorCoreTiles unweighed = ranked_tensor_core_tiles(16, 32, 32, 4, 4, 0, 1).at(0);
  EXPECT_EQ(unweighed.i[3] * unweighed.i[4], 4);
  EXPECT_EQ(unweighed.j[3] * unweighed.j[4], 8);
}

// Shapes the tensor-core rule takes, small enough for the interpreter.
const char* const kTensorCoreWorkloads[] = {
    "matmul:m=64,n=64,k=64",
    "matmul:m=64,n=128,k=32,dtype=f16",
    "matmul:m=32,n=64,k=48,dtype=bf16",
    "batch_matmul:batch=2,m=32,n=32,k=32",
    "conv2d:batch=2,in_channels=8,out_channels=16,size=8x8,kernel=3x3,padding=1x1",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=6x6,kernel=3x3,padding=1x1,dtype=f16",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=6x6,kernel=1x1",
    "conv_transpose2d:batch=1,in_channels=8,out_channels=16,size=6x6,kernel=3x3",
    // Operands staged by columns ([k, m] and [k, n] shared tiles, loaded transposed).
    "matmul:m=32,n=64,k=32,trans_a=true",
    "matmul:m=32,n=32,k=48,trans_a=true,dtype=f16",
    "matmul:m=20,n=24,k=40",
    "matmul:m=20,n=24,k=40,dtype=bf16",
};

TEST(TensorCoreDefault, GemmsAndConvsRunOnTensorCoresAndComputeTheirOp) {
  for (const char* spec : kTensorCoreWorkloads) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = workload(spec);
    Schedule sch = default_schedule(func, lower::Target::cuda_h200());
    EXPECT_GE(tensorize_count(sch), 4u) << sch.trace().to_string();  // fill, loads, mma, store
    EXPECT_TRUE(schedule::testing::replays_exactly(sch));
    EXPECT_TRUE(schedule::testing::same_outputs(func, sch.func(), 5, /*exact=*/false)) << sch.trace().to_string();
    const ir::PrimFunc kernel = lower::lower(sch.func(), lower::Target::cuda_h200()).func;
    EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(kernel)));
  }
}

// The fragment loads of the default's tensor-core sketch, by name: which operands it
// stages by columns.
std::string fragment_loads(const std::string& spec) {
  std::string loads;
  const Schedule sch = default_schedule(workload(spec), lower::Target::cuda_h200());
  for (const schedule::Instruction& inst : sch.trace().instructions()) {
    if (inst.kind != schedule::InstructionKind::Tensorize) continue;
    const std::string text = schedule::to_string(inst);
    for (const char* name : {"mma_load_a_", "mma_ldmatrix_a_", "mma_load_b_", "mma_ldmatrix_b_"}) {
      const size_t at = text.find(name);
      if (at != std::string::npos) loads += text.substr(at, text.find_first_of("\" ,)", at) - at) + " ";
    }
  }
  return loads;
}

// An operand that is a transposed matrix in memory is staged [k, m] or [k, n]: a transposed
// A, the [k, n] B a padded or split-K GEMM copies, the input of a 1x1 convolution of one
// image; and so is the input of a convolution with a kernel wider than 1 whose default
// puts the taps outermost in k, where it runs along m (unit strides: 3x3, dilated 5x9,
// 3x3x1). The others stay [m, k] or [n, k]: a plain A, the input of a strided 11x11, every
// convolution's weights (copied into B'[n, k] first, taps outer).
TEST(TensorCoreDefault, TransposedOperandsAreStagedByColumns) {
  auto staged = [](const std::string& spec, const char* a, const char* b) {
    const std::string loads = fragment_loads(spec);
    EXPECT_NE(loads.find(a), std::string::npos) << spec << ": " << loads;
    EXPECT_NE(loads.find(b), std::string::npos) << spec << ": " << loads;
  };
  staged("matmul:m=64,n=64,k=64", "mma_load_a_m16k8_f32", "mma_load_b_k8n8_f32");
  staged("matmul:m=32,n=64,k=32,trans_a=true", "mma_load_a_m16k8_from_k8m16_f32", "mma_load_b_n8k8_from_k8n8_f32");
  staged("matmul:m=32,n=32,k=48,trans_a=true,dtype=f16", "mma_ldmatrix_a_m16k16_from_k16m16_f16",
         "mma_ldmatrix_b_n8k16_from_k16n8_f16");
  staged("matmul:m=20,n=24,k=40", "mma_load_a_m16k8_f32", "mma_load_b_n8k8_from_k8n8_f32");
  staged("conv2d:batch=2,in_channels=8,out_channels=16,size=8x8,kernel=3x3,padding=1x1", "mma_load_a_m16k8_from_k8m16_f32",
         "mma_load_b_trans_n8k8_f32");
  staged("conv2d:batch=2,in_channels=16,out_channels=16,size=6x6,kernel=3x3,padding=1x1,dtype=f16",
         "mma_ldmatrix_a_m16k16_from_k16m16_f16", "mma_ldmatrix_b_trans_n8k16_f16");
  staged("conv2d:batch=1,in_channels=16,out_channels=16,size=6x6,kernel=1x1", "mma_load_a_m16k8_from_k8m16_f32",
         "mma_load_b_trans_n8k8_f32");
  staged("conv2d:batch=2,in_channels=8,out_channels=16,size=40x40,kernel=5x9,padding=2x4,dilation=2x3",
         "mma_load_a_m16k8_from_k8m16_f32", "mma_load_b_trans_n8k8_f32");
  staged("conv3d:batch=2,in_channels=4,out_channels=16,size=6x6x5,kernel=3x3x1,dtype=f16", "mma_ldmatrix_a_m16k16_from_k16m16_f16",
         "mma_ldmatrix_b_trans_n8k16_f16");
  staged("matmul:m=64,n=64,k=65536", "mma_load_a_m16k8_f32", "mma_load_b_n8k8_from_k8n8_f32");  // split-K
  staged("conv2d:batch=2,in_channels=3,out_channels=16,size=47x47,kernel=11x11,stride=4x4",
         "mma_load_a_m16k8_f32", "mma_load_b_trans_n8k8_f32");
}

// The CUDA code of the default schedule of `spec`, its prelude left out.
std::string default_kernels(const std::string& spec) {
  const Schedule sch = default_schedule(workload(spec), lower::Target::cuda_h200());
  const ir::PrimFunc kernel = lower::lower(sch.func(), lower::Target::cuda_h200()).func;
  const codegen::CudaSource source = codegen::generate_cuda(kernel, lower::Target::cuda_h200());
  return source.code.substr(source.prelude_size);
}

// A transposed A with no padding is staged by columns and fetched in 16-byte vectors (its
// tile's rows are runs of memory); a padded GEMM's [k, n] B, staged by columns too, is
// fetched one element a lane (its guarded cp.async go lane by lane).
TEST(TensorCoreDefault, AnUnguardedTransposedOperandIsFetchedInVectors) {
  const std::string f32 = default_kernels("matmul:m=32,n=64,k=32,trans_a=true");
  EXPECT_NE(f32.find("*(const float4*)(A + "), std::string::npos) << f32;
  const std::string f16 = default_kernels("matmul:m=32,n=32,k=48,trans_a=true,dtype=f16");
  EXPECT_NE(f16.find("dragon_cp_async_16(A_reindex_shared"), std::string::npos) << f16;
  const std::string padded = default_kernels("matmul:m=20,n=24,k=40");
  EXPECT_NE(padded.find("dragon_cp_async_4(B_reindex_shared"), std::string::npos) << padded;
  EXPECT_EQ(padded.find("dragon_cp_async_16(B_reindex_shared"), std::string::npos) << padded;
}

// A convolution with a 3x3 kernel and 32 channels, by default: k runs over the taps
// outside the channels, so a k-step of 32 holds one tap. Its weights are copied into
// B'[n, k] by a first kernel and fetched from there in 16-byte pieces; its input's gather
// takes each k-step's tap whole (no element's k is split into channel and tap, as dividing
// it by the kernel's nine taps would) and runs along m (staged by columns); the kernels
// compute the conv thread by thread between barriers.
TEST(TensorCoreDefault, AConvolutionsTapsGoOutermostAndItsWeightsAreCopiedOnce) {
  const std::string spec = "conv2d:batch=2,in_channels=32,out_channels=16,size=10x10,kernel=3x3";
  const ir::PrimFunc func = workload(spec);
  const Schedule sch = default_schedule(func, lower::Target::cuda_h200());
  const ir::PrimFunc kernel = lower::lower(sch.func(), lower::Target::cuda_h200()).func;
  const codegen::CudaSource source = codegen::generate_cuda(kernel, lower::Target::cuda_h200());
  ASSERT_EQ(source.kernels.size(), 2u) << source.code;
  const std::string code = source.code.substr(source.prelude_size);
  const size_t gemm = code.find(source.kernels[1].name);
  ASSERT_NE(gemm, std::string::npos);
  EXPECT_NE(code.substr(0, gemm).find("W_reindex["), std::string::npos) << code;
  EXPECT_NE(code.find("dragon_cp_async_16(W_reindex_shared"), std::string::npos) << code;
  size_t gathers = 0;
  for (size_t at = code.find("dragon_cp_async_4(X_reindex_shared"); at != std::string::npos;
       at = code.find("dragon_cp_async_4(X_reindex_shared", at + 1)) {
    const std::string line = code.substr(at, code.find('\n', at) - at);
    EXPECT_EQ(line.find(" / 9)"), std::string::npos) << line;
    EXPECT_EQ(line.find(" % 9)"), std::string::npos) << line;
    ++gathers;
  }
  EXPECT_GT(gathers, 0u) << code;
  EXPECT_NE(fragment_loads(spec).find("mma_load_a_m16k8_from_k8m16_f32"), std::string::npos);
  EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(kernel)));
}

TEST(TensorCoreDefault, LongKAndTheOptionOutLeaveTheCudaCoreDefault) {
  DefaultScheduleOptions off;
  off.tensor_cores = false;
  EXPECT_EQ(tensorize_count(default_schedule(workload("matmul:m=64,n=64,k=64"), lower::Target::cuda_h200(), off)), 0u);
  // K = 8192 in tf32 k-steps of 8 is 1024 serial adds a lane, within max_terms_per_thread
  // (4096): the plain GEMM. K = 65536 is 8192 of them: the split-K sketch, whose partial
  // sums over chunks are short, unless the limit leaves no sketch.
  auto rfactors = [](const std::optional<Schedule>& sch) {
    for (const schedule::Instruction& inst : sch->trace().instructions()) {
      if (inst.kind == schedule::InstructionKind::RFactor) return true;
    }
    return false;
  };
  const std::optional<Schedule> plain = tensor_core_default(workload("matmul:m=64,n=64,k=8192"), lower::Target::cuda_h200(), 4096);
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(rfactors(plain));
  const std::optional<Schedule> split = tensor_core_default(workload("matmul:m=64,n=64,k=65536"), lower::Target::cuda_h200(), 4096);
  ASSERT_TRUE(split.has_value());
  EXPECT_TRUE(rfactors(split));
  EXPECT_FALSE(tensor_core_default(workload("matmul:m=64,n=64,k=65536"), lower::Target::cuda_h200(), 8).has_value());
  // Nothing for the CPU, nor for a function with no GEMM.
  EXPECT_FALSE(tensor_core_default(workload("matmul:m=64,n=64,k=64"), lower::Target::cpu(), 4096).has_value());
  EXPECT_FALSE(tensor_core_default(workload("softmax:shape=64x64"), lower::Target::cuda_h200(), 4096).has_value());
}

}  // namespace
}  // namespace dragon::search
