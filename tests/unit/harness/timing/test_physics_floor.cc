// The physics floor: bytes and flops of real op specs, the bound that decides it, and the
// verdict on times below it.
#include <gtest/gtest.h>

#include "dragon/harness/physics_floor.h"
#include "dragon/ops/op_registry.h"

namespace dragon::harness {
namespace {

ir::PrimFunc op(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

DevicePeaks round_peaks() {
  // Round numbers so expected floors are easy to read: 1 TB/s, 10 TFLOP/s f32, 100 16-bit.
  return DevicePeaks{.memory_bytes_per_s = 1e12, .f32_flops_per_s = 1e13, .tensor_16bit_flops_per_s = 1e14,
                     .l2_bytes = 1 << 20, .source = "test"};
}

TEST(PhysicsFloor, MatmulDoesTwoFlopsPerMultiplyAccumulate) {
  PhysicsFloor f = physics_floor(op("matmul:m=1024,n=512,k=256"), round_peaks());
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 1024 * 512 * 256);
  // A and B read once; C (2 MB) is past the 1 MB L2 by 1 MB.
  EXPECT_DOUBLE_EQ(f.bytes, 4.0 * (1024 * 256 + 256 * 512) + (4.0 * 1024 * 512 - (1 << 20)));
  // 268 MFLOP at 10 TFLOP/s = 26.8 us, above 2.6 MB at 1 TB/s = 2.6 us.
  EXPECT_TRUE(f.compute_bound);
  EXPECT_NEAR(f.floor_ms, 2.0 * 1024 * 512 * 256 / 1e13 * 1e3, 1e-12);
}

TEST(PhysicsFloor, SixteenBitInputsUseTheTensorCorePeak) {
  PhysicsFloor f32 = physics_floor(op("matmul:m=1024,n=1024,k=1024"), round_peaks());
  PhysicsFloor f16 = physics_floor(op("matmul:m=1024,n=1024,k=1024,dtype=f16"), round_peaks());
  // The f16 product still accumulates in f32 (the cast stage adds no arithmetic).
  EXPECT_DOUBLE_EQ(f16.flops, f32.flops);
  EXPECT_NEAR(f16.floor_ms * 10, f32.floor_ms, 1e-9);
}

TEST(PhysicsFloor, F32ArithmeticMayRunAtThreePassTf32) {
  // 3xTF32 keeps f32 accuracy at a third of the TF32 rate: 60 TFLOP/s / 3 = 20 TFLOP/s beats
  // the CUDA cores' 10, so a correct f32 GEMM at 15 TFLOP/s is possible.
  DevicePeaks peaks = round_peaks();
  peaks.tensor_tf32_flops_per_s = 6e13;
  const double flops = 2.0 * 1024 * 1024 * 1024;
  PhysicsFloor f = physics_floor(op("matmul:m=1024,n=1024,k=1024"), peaks);
  EXPECT_NEAR(f.floor_ms, flops / 2e13 * 1e3, 1e-12);
  EXPECT_FALSE(faster_than_physics(flops / 15e12 * 1e3, f));
  EXPECT_TRUE(faster_than_physics(flops / 30e12 * 1e3, f));
  // Without a TF32 rate the CUDA cores' rate decides, and 16-bit inputs keep theirs.
  EXPECT_NEAR(physics_floor(op("matmul:m=1024,n=1024,k=1024"), round_peaks()).floor_ms, flops / 1e13 * 1e3, 1e-12);
  EXPECT_NEAR(physics_floor(op("matmul:m=1024,n=1024,k=1024,dtype=f16"), peaks).floor_ms, flops / 1e14 * 1e3, 1e-12);
}

TEST(PhysicsFloor, ElementwiseOpsAreMemoryBound) {
  PhysicsFloor f = physics_floor(op("relu:shape=4096x4096"), round_peaks());
  EXPECT_FALSE(f.compute_bound);
  EXPECT_DOUBLE_EQ(f.bytes, 2.0 * 4 * 4096 * 4096 - (1 << 20));
  EXPECT_NEAR(f.floor_ms, f.bytes / 1e12 * 1e3, 1e-12);
  EXPECT_NE(f.describe().find("memory"), std::string::npos);
}

TEST(PhysicsFloor, SmallOutputsMayStayInTheL2) {
  // 64 KB of output fits in the L2: only the inputs must cross HBM.
  PhysicsFloor f = physics_floor(op("relu:shape=128x128"), round_peaks());
  EXPECT_DOUBLE_EQ(f.bytes, 4.0 * 128 * 128);
}

TEST(PhysicsFloor, TimesWellBelowTheFloorAreImpossible) {
  PhysicsFloor f;
  f.floor_ms = 1.0;
  EXPECT_TRUE(faster_than_physics(0.5, f));    // half the work skipped
  EXPECT_TRUE(faster_than_physics(0.003, f));  // 0.3% of the output written
  EXPECT_FALSE(faster_than_physics(0.95, f));  // within measurement noise of the bound
  EXPECT_FALSE(faster_than_physics(3.0, f));
}

// An embedding table is read only where the indices point, and they may repeat: the floor
// counts the indices, offsets and output, never the table (found on the H200, where a
// default-schedule embedding bag beat a floor that counted the whole 512 MB table).
TEST(PhysicsFloor, GatheredTablesAreNotCountedAsRead) {
  PhysicsFloor bag = physics_floor(
      op("embedding_bag:num_embeddings=1000000,embedding_dim=128,batch=16384,max_bag_length=20,num_indices=327680"),
      round_peaks());
  const double table = 1e6 * 128 * 4, indices = 327680 * 8, offsets = 16385 * 8;
  EXPECT_LT(bag.bytes, table);
  EXPECT_GE(bag.bytes, indices + offsets);
  // A plain read of the same size still counts in full.
  PhysicsFloor copy = physics_floor(op("relu:shape=1000000x128"), round_peaks());
  EXPECT_GE(copy.bytes, table);
}

// torch.triu(A @ B): a kernel may compute only the upper triangle, half the products, so
// the arithmetic is no floor; the bytes still are.
TEST(PhysicsFloor, MaskedArithmeticIsNoFloor) {
  PhysicsFloor triangular = physics_floor(op("triangular_matmul:m=1024,n=1024,k=1024"), round_peaks());
  EXPECT_TRUE(triangular.flops_skippable);
  EXPECT_FALSE(triangular.compute_bound);
  EXPECT_NEAR(triangular.floor_ms, 1e3 * triangular.bytes / 1e12, 1e-12);
  EXPECT_FALSE(physics_floor(op("matmul:m=1024,n=1024,k=1024"), round_peaks()).flops_skippable);
  EXPECT_FALSE(physics_floor(op("relu:shape=64x64"), round_peaks()).flops_skippable) << "a data-dependent select";
}

TEST(PhysicsFloor, H200SpecSheet) {
  DevicePeaks p = DevicePeaks::h200_spec_sheet();
  EXPECT_DOUBLE_EQ(p.memory_bytes_per_s, 4.8e12);
  EXPECT_EQ(p.l2_bytes, 50LL << 20);
  // KernelBench level 1's softmax (4096 x 393216 f32): 6.4 GB in, 6.4 GB out.
  PhysicsFloor f = physics_floor(op("softmax:shape=4096x393216,axis=1"), p);
  EXPECT_FALSE(f.compute_bound);
  EXPECT_NEAR(f.floor_ms, (2.0 * 4 * 4096 * 393216 - (50 << 20)) / 4.8e12 * 1e3, 1e-9);
}

}  // namespace
}  // namespace dragon::harness
