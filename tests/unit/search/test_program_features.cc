// Per-store features on programs small enough to count by hand: a copy (straight,
// transposed, vectorized and parallel), a GEMM unscheduled and with a known tiling, a
// GEMM bound to GPU threads, a two-stage function with an intermediate buffer. Every
// expected figure is worked out in the comments from the loop nest.
#include <gtest/gtest.h>

#include <set>

#include "dragon/ops/te.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/program_features.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

using ir::DataType;
using ops::FunctionBuilder;
using ops::IndexVars;
using ops::Tensor;
using schedule::LoopRV;
using schedule::Schedule;

double s(double x) { return feature_scale(x); }

// out[i, j] = in[i, j] (or in[j, i] when transposed), f32, 64 x 32.
ir::PrimFunc copy(bool transposed) {
  FunctionBuilder fb("copy");
  Tensor in = fb.input("A", DataType::f32(), transposed ? std::vector<int64_t>{32, 64} : std::vector<int64_t>{64, 32});
  Tensor out = fb.compute("B", {64, 32}, [&](const IndexVars& i) { return transposed ? in(i[1], i[0]) : in(i[0], i[1]); });
  return fb.build({out});
}

// C[i, j] = sum_k A[i, k] * B[k, j], f32, 64^3.
ir::PrimFunc gemm() {
  FunctionBuilder fb("gemm");
  Tensor a = fb.input("A", DataType::f32(), {64, 64});
  Tensor b = fb.input("B", DataType::f32(), {64, 64});
  Tensor c = fb.reduce("C", {64, 64}, {64}, DataType::f32(), ops::Reducer::sum(),
                       [&](const IndexVars& i, const IndexVars& r) { return a(i[0], r[0]) * b(r[0], i[1]); });
  return fb.build({c});
}

TEST(ProgramFeatures, NamesAreUniqueAndMatchTheRowLength) {
  const auto& names = feature_names();
  EXPECT_EQ(static_cast<int>(names.size()), feature_count());
  EXPECT_EQ(feature_descriptions().size(), names.size());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(feature_index(names[7]), 7);
  EXPECT_EQ(names[feature_index("buffer4.thread_x_stride")], "buffer4.thread_x_stride");
  EXPECT_THROW(feature_index("no_such_column"), UserError);
  // 39 store columns, 22 per buffer slot x 5, 10 curve samples, 7 loop columns.
  EXPECT_EQ(feature_count(), 39 + 22 * kFeatureBufferSlots + kIntensityCurveSamples + 7);
}

TEST(ProgramFeatures, CopyCountsBytesLinesAndStrides) {
  ProgramFeatures f = extract_program_features(copy(false), lower::Target::cpu());
  ASSERT_EQ(f.rows(), 1);
  // 2048 iterations, no arithmetic; A and B: 2048 x 4 bytes each, unique too. The inner
  // loop j moves both by 1 element: a new 64-byte line every 16 iterations, 128 lines;
  // the whole buffer is contiguous, so unique lines = 8192 / 64 = 128 too.
  EXPECT_EQ(f.at(0, "float_add_sub"), 0);
  EXPECT_FLOAT_EQ(f.at(0, "outer_prod"), s(2048));
  EXPECT_FLOAT_EQ(f.at(0, "num_loops"), s(2));
  for (const char* slot : {"buffer0", "buffer1"}) {
    const std::string b = slot;
    EXPECT_FLOAT_EQ(f.at(0, b + ".bytes"), s(8192)) << b;
    EXPECT_FLOAT_EQ(f.at(0, b + ".unique_bytes"), s(8192)) << b;
    EXPECT_FLOAT_EQ(f.at(0, b + ".lines"), s(128)) << b;
    EXPECT_FLOAT_EQ(f.at(0, b + ".unique_lines"), s(128)) << b;
    EXPECT_FLOAT_EQ(f.at(0, b + ".innermost_stride"), s(1)) << b;
    EXPECT_EQ(f.at(0, b + ".reuse_none"), 1) << b;
    EXPECT_EQ(f.at(0, b + ".scope_global"), 1) << b;
  }
  // Same lines and bytes: sorted by name, A (read) first.
  EXPECT_EQ(f.at(0, "buffer0.is_read"), 1);
  EXPECT_EQ(f.at(0, "buffer1.is_write"), 1);
  EXPECT_EQ(f.at(0, "buffer2.bytes"), 0);  // no third buffer
  EXPECT_EQ(f.at(0, "is_gpu"), 0);
  // Parameters count as allocated outside every loop: B's 8192 bytes.
  EXPECT_FLOAT_EQ(f.at(0, "alloc_size"), s(8192));
  EXPECT_FLOAT_EQ(f.at(0, "alloc_outer_prod"), s(1));
}

TEST(ProgramFeatures, TransposedReadTouchesALineEveryIteration) {
  ProgramFeatures f = extract_program_features(copy(true), lower::Target::cpu());
  ASSERT_EQ(f.rows(), 1);
  // A[j, i] with A 32 x 64: the inner loop j moves A by 64 elements (256 bytes, more than
  // a line): 2048 lines. B keeps 128, so A sorts first.
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.lines"), s(2048));
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.innermost_stride"), s(64));
  EXPECT_EQ(f.at(0, "buffer0.is_read"), 1);
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.lines"), s(128));
}

TEST(ProgramFeatures, VectorizedAndParallelLoops) {
  Schedule sch(copy(false));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> j = sch.split(loops[1], {schedule::None{}, int64_t{4}});
  sch.vectorize(j[1]);
  sch.parallel(loops[0]);
  ProgramFeatures f = extract_program_features(sch.func(), lower::Target::cpu());
  ASSERT_EQ(f.rows(), 1);
  EXPECT_FLOAT_EQ(f.at(0, "vectorize_num"), s(1));
  EXPECT_FLOAT_EQ(f.at(0, "vectorize_prod"), s(4));
  EXPECT_FLOAT_EQ(f.at(0, "vectorize_len"), s(4));
  EXPECT_EQ(f.at(0, "vectorize_innermost"), 1);
  EXPECT_FLOAT_EQ(f.at(0, "parallel_num"), s(1));
  EXPECT_FLOAT_EQ(f.at(0, "parallel_prod"), s(64));
  EXPECT_EQ(f.at(0, "parallel_outermost"), 1);
  EXPECT_FLOAT_EQ(f.at(0, "num_loops"), s(3));
  EXPECT_FLOAT_EQ(f.at(0, "outer_prod"), s(2048));
  EXPECT_EQ(f.at(0, "unroll_num"), 0);
}

TEST(ProgramFeatures, GemmCountsMultiplyAddsReuseAndLines) {
  ProgramFeatures f = extract_program_features(gemm(), lower::Target::cpu());
  // The init store (C = 0) is a constant: one row, the update C = C + A * B.
  ASSERT_EQ(f.rows(), 1);
  const double iters = 64.0 * 64 * 64;
  EXPECT_FLOAT_EQ(f.at(0, "float_mad"), s(iters));
  EXPECT_EQ(f.at(0, "float_add_sub"), 0);
  EXPECT_EQ(f.at(0, "float_mul"), 0);
  EXPECT_FLOAT_EQ(f.at(0, "guard_depth"), 0);
  // Lines (loops i, j, k): B[k, j] moves 64 elements per k: one line per iteration,
  // 262144. A[i, k] moves 1 per k: 262144 / 16 = 16384. C[i, j] does not move with k; j
  // moves it by 1: 262144 / 64 (k) / 16 = 256. Sorted B, A, C.
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.lines"), s(iters));
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.innermost_stride"), s(64));
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.lines"), s(16384));
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.lines"), s(256));
  EXPECT_EQ(f.at(0, "buffer2.is_read_write"), 1);
  EXPECT_EQ(f.at(0, "buffer2.innermost_stride"), 0);
  for (const char* b : {"buffer0", "buffer1", "buffer2"}) {
    EXPECT_FLOAT_EQ(f.at(0, std::string(b) + ".bytes"), s(4 * iters)) << b;
    EXPECT_FLOAT_EQ(f.at(0, std::string(b) + ".unique_bytes"), s(4 * 4096)) << b;
    EXPECT_EQ(f.at(0, std::string(b) + ".reuse_loop"), 1) << b;
    EXPECT_FLOAT_EQ(f.at(0, std::string(b) + ".reuse_count"), s(64)) << b;
  }
  // Reuse: C is the same for every k (the innermost loop): distance 1 iteration, the
  // bytes of one iteration (3 floats). A is the same for every j: distance 64 iterations
  // (k) and what loop k touches: 64 of A, 64 of B, 1 of C = 129 floats. B is the same
  // for every i: distance 64 * 64 iterations.
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.reuse_distance_iters"), s(1));
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.reuse_distance_bytes"), s(12));
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.reuse_distance_iters"), s(64));
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.reuse_distance_bytes"), s(129 * 4));
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.reuse_distance_iters"), s(4096));
  // Intensity with all three loops: 2 flops counted as 1 multiply-add per iteration,
  // 262144 multiply-adds over 3 x 16384 bytes.
  EXPECT_FLOAT_EQ(f.at(0, "intensity9"), static_cast<float>(s(iters / (3 * 16384.0))));
}

TEST(ProgramFeatures, TiledGemmKeepsWorkAndMovesTheStrides) {
  // i -> (4, 16), j -> (4, 16), order i0 j0 k i1 j1.
  Schedule sch(gemm());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {int64_t{4}, int64_t{16}});
  std::vector<LoopRV> j = sch.split(loops[1], {int64_t{4}, int64_t{16}});
  sch.reorder({i[0], j[0], loops[2], i[1], j[1]});
  ProgramFeatures f = extract_program_features(sch.func(), lower::Target::cpu());
  ASSERT_EQ(f.rows(), 1);
  EXPECT_FLOAT_EQ(f.at(0, "float_mad"), s(64.0 * 64 * 64));
  EXPECT_FLOAT_EQ(f.at(0, "num_loops"), s(5));
  // Innermost j1 moves C and B by 1 and not A: A's line count is a line per 16 x 16
  // block of (i1, j1)... A[i, k] moves with i1 by 64 elements: 262144 / 16 lines; B and
  // C move with j1 by 1: 262144 / 16 each. All three tie on lines and bytes: A, B, C.
  EXPECT_EQ(f.at(0, "buffer0.innermost_stride"), 0);       // A
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.innermost_stride"), s(1));  // B
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.innermost_stride"), s(1));  // C
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.lines"), s(16384));
  // A does not move with j1: reused 16 times at distance 1.
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.reuse_count"), s(16));
  EXPECT_FLOAT_EQ(f.at(0, "buffer0.reuse_distance_iters"), s(1));
  // C's tile: 16 x 16 floats under (i1, j1); k does not move it: reused 64 times at a
  // distance of 256 iterations.
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.reuse_count"), s(64));
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.reuse_distance_iters"), s(256));
}

TEST(ProgramFeatures, GpuBindingsAndThreadStrides) {
  // i -> (blockIdx.x 4, threadIdx.x 16), j -> (threadIdx.y 8, 8).
  Schedule sch(gemm());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {int64_t{4}, int64_t{16}});
  std::vector<LoopRV> j = sch.split(loops[1], {int64_t{8}, int64_t{8}});
  sch.reorder({i[0], i[1], j[0], j[1], loops[2]});
  sch.bind(i[0], "blockIdx.x");
  sch.bind(i[1], "threadIdx.x");
  sch.bind(j[0], "threadIdx.y");
  ProgramFeatures f = extract_program_features(sch.func(), lower::Target::cuda_h200());
  ASSERT_EQ(f.rows(), 1);
  EXPECT_EQ(f.at(0, "is_gpu"), 1);
  EXPECT_FLOAT_EQ(f.at(0, "blockIdx_x_len"), s(4));
  EXPECT_FLOAT_EQ(f.at(0, "threadIdx_x_len"), s(16));
  EXPECT_FLOAT_EQ(f.at(0, "threadIdx_y_len"), s(8));
  EXPECT_FLOAT_EQ(f.at(0, "threads_per_block"), s(128));
  EXPECT_FLOAT_EQ(f.at(0, "blockIdx_y_len"), s(1));
  // threadIdx.x is i1: A[i, k] and C[i, j] move by a row (64 elements) per thread, B
  // not at all. Innermost k: B moves by 64 per iteration (the most lines, slot 0), A by
  // 1, C not (slot 2: fewest lines).
  EXPECT_EQ(f.at(0, "buffer0.thread_x_stride"), 0);
  EXPECT_FLOAT_EQ(f.at(0, "buffer1.thread_x_stride"), s(64));
  EXPECT_FLOAT_EQ(f.at(0, "buffer2.thread_x_stride"), s(64));
}

TEST(ProgramFeatures, IntermediateBufferAllocation) {
  // T = A * 2 (an intermediate, allocated in the root block), B = T + 1: two rows.
  FunctionBuilder fb("two_stages");
  Tensor a = fb.input("A", DataType::f32(), {64, 32});
  Tensor t = fb.compute("T", {64, 32}, [&](const IndexVars& i) { return a(i[0], i[1]) * 2.0; });
  Tensor b = fb.compute("B", {64, 32}, [&](const IndexVars& i) { return t(i[0], i[1]) + 1.0; });
  ProgramFeatures f = extract_program_features(fb.build({b}), lower::Target::cpu());
  ASSERT_EQ(f.rows(), 2);
  EXPECT_FLOAT_EQ(f.at(0, "float_mul"), s(2048));
  EXPECT_FLOAT_EQ(f.at(0, "alloc_size"), s(2048 * 4));
  EXPECT_FLOAT_EQ(f.at(0, "alloc_outer_prod"), s(1));
  EXPECT_FLOAT_EQ(f.at(0, "alloc_inner_prod"), s(2048));
  EXPECT_FLOAT_EQ(f.at(1, "float_add_sub"), s(2048));
  // The second store reads T, which the first wrote under other loops: no shared loop,
  // so no serial reuse; both buffers of row 1 are read or written once per iteration.
  EXPECT_EQ(f.at(1, "buffer0.reuse_none"), 1);
}

TEST(ProgramFeatures, ScheduleTheTargetCannotRunStillHasFeaturesOrAUserError) {
  // An unbound GEMM on the GPU: the feature passes do not check bindings, so it has rows.
  ProgramFeatures f = extract_program_features(gemm(), lower::Target::cuda_h200());
  EXPECT_EQ(f.rows(), 1);
  EXPECT_EQ(f.at(0, "is_gpu"), 1);
  EXPECT_FLOAT_EQ(f.at(0, "threadIdx_x_len"), s(1));
}

}  // namespace
}  // namespace dragon::search
