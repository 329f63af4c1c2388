// A MetaSchedule-style CUDA GEMM sketch (multi-level tiling SSSRRSRS, thread binding,
// local and shared caches, cooperative fetch and unroll annotations) written as a TVM
// JSON trace and replayed onto matmul 64x64x64. Not a search test: the decisions are fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/trace_json.h"
#include "gemm_sketch.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::workload;

// TVM's CUDA matmul sketch (REFERENCE-metaschedule.md section 3), one instruction a line,
// as this code base records it. No primitive refused a step; the differences from TVM's text:
// - the matmul block is "C" (TVM: "T_matmul_NT"); Split has TVM v0.18's two attrs
//   (preserve_unit_iters, disable_predication);
// - tiles: i = 2*1*8*2*2, j = 4*2*4*1*2, k = 8*2*4 (S0..S4, R0..R2), so blockIdx.x = 8,
//   vthread.x = 2, threadIdx.x = 32; cooperative fetch 2 (A) and 4 (B), unroll 64;
// - ComputeAt of a shared copy covers what every thread of the block reads (thread-bound
//   loops above the target loop are relaxed, as TVM does), so the cooperative fetch
//   copies the thread block's tile of A and B.
constexpr const char* kGemmTraceJson =
    R"([[["GetBlock",[],["C","main"],["b0"]],)"
    R"(["GetBlock",[],["root","main"],["b1"]],)"
    R"(["Annotate",["b0","\"SSSRRSRS\""],["meta_schedule.tiling_structure"],[]],)"
    R"(["GetLoops",["b0"],[],["l2","l3","l4"]],)"
    R"(["SamplePerfectTile",["l2"],[5,64],["v5","v6","v7","v8","v9"]],)"
    R"(["Split",["l2","v5","v6","v7","v8","v9"],[true,false],["l10","l11","l12","l13","l14"]],)"
    R"(["SamplePerfectTile",["l3"],[5,64],["v15","v16","v17","v18","v19"]],)"
    R"(["Split",["l3","v15","v16","v17","v18","v19"],[true,false],["l20","l21","l22","l23","l24"]],)"
    R"(["SamplePerfectTile",["l4"],[3,64],["v25","v26","v27"]],)"
    R"(["Split",["l4","v25","v26","v27"],[true,false],["l28","l29","l30"]],)"
    R"(["Reorder",["l10","l20","l11","l21","l12","l22","l28","l29","l13","l23","l30","l14","l24"],[],[]],)"
    R"(["Fuse",["l10","l20"],[true],["l31"]],)"
    R"(["Bind",["l31"],["blockIdx.x"],[]],)"
    R"(["Fuse",["l11","l21"],[true],["l32"]],)"
    R"(["Bind",["l32"],["vthread.x"],[]],)"
    R"(["Fuse",["l12","l22"],[true],["l33"]],)"
    R"(["Bind",["l33"],["threadIdx.x"],[]],)"
    R"(["Annotate",["b0",16],["meta_schedule.thread_extent_low_inclusive"],[]],)"
    R"(["Annotate",["b0",256],["meta_schedule.thread_extent_high_inclusive"],[]],)"
    R"(["CacheWrite",["b0",[]],[0,"local"],["b34"]],)"
    R"(["ReverseComputeAt",["b34","l33"],[true,-1],[]],)"
    R"(["CacheRead",["b0",["b0"]],[0,"shared"],["b35"]],)"
    R"(["ComputeAt",["b35","l28"],[true,-1],[]],)"
    R"(["GetLoops",["b35"],[],["l36","l37","l38","l39","l40","l41"]],)"
    R"(["Fuse",["l40","l41"],[true],["l42"]],)"
    R"(["SampleCategorical",[],[[1,2,3,4],[0.25,0.25,0.25,0.25]],["v43"]],)"
    R"(["Annotate",["b35","v43"],["meta_schedule.cooperative_fetch"],[]],)"
    R"(["CacheRead",["b0",["b0"]],[1,"shared"],["b44"]],)"
    R"(["ComputeAt",["b44","l28"],[true,-1],[]],)"
    R"(["GetLoops",["b44"],[],["l45","l46","l47","l48","l49","l50"]],)"
    R"(["Fuse",["l49","l50"],[true],["l51"]],)"
    R"(["SampleCategorical",[],[[1,2,3,4],[0.25,0.25,0.25,0.25]],["v52"]],)"
    R"(["Annotate",["b44","v52"],["meta_schedule.cooperative_fetch"],[]],)"
    R"(["SampleCategorical",[],[[0,16,64,512,1024],[0.2,0.2,0.2,0.2,0.2]],["v53"]],)"
    R"(["Annotate",["b1","v53"],["meta_schedule.unroll_explicit"],[]],)"
    R"(["EnterPostproc",[],[],[]]],)"
    R"([[4,[2,1,8,2,2]],[6,[4,2,4,1,2]],[8,[8,2,4]],[25,1],[31,3],[33,2]]])";

constexpr const char* kGemmWorkload = "matmul:m=64,n=64,k=64";

// The same sketch through the Schedule API; its trace must be kGemmTraceJson, so the
// literal stays what the primitives record.
Schedule build_gemm_sketch() {
  Schedule sch(workload(kGemmWorkload));
  testing::apply_gemm_sketch(sch);
  sch.enter_postproc();
  return sch;
}

Schedule replay_gemm_json() {
  Schedule sch(workload(kGemmWorkload));
  trace_from_json(kGemmTraceJson).apply_to(sch);
  return sch;
}

// Outputs of `before` and `after` on the same normal random inputs, within
// rel_tol * (largest |expected|): the tiling reassociates the k reduction.
::testing::AssertionResult close_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed,
                                         double rel_tol) {
  std::vector<tensor::HostTensor> expected = interp::make_arguments(before, seed, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(before, expected);
  interp::run(after, actual);
  for (size_t p = 0; p < before->params.size(); ++p) {
    if (before->params[p].role == ir::ParamRole::kInput) continue;
    const tensor::HostTensor& e = expected[p];
    const tensor::HostTensor& a = actual[p];
    double scale = 0;
    for (int64_t i = 0; i < e.num_elements(); ++i) scale = std::max(scale, std::fabs(e.get(i)));
    if (scale == 0) return ::testing::AssertionFailure() << "output is all zeros: the comparison would be vacuous";
    int shown = 0;
    ::testing::AssertionResult failure = ::testing::AssertionFailure();
    for (int64_t i = 0; i < e.num_elements(); ++i) {
      double x = e.get(i), y = a.get(i);
      if (std::isnan(y) || std::fabs(x - y) > rel_tol * scale) {
        if (shown++ < 4) failure << "[" << i << "] expected " << x << ", got " << y << "; ";
      }
    }
    if (shown > 0) return failure << shown << " mismatches (scale " << scale << ", tolerance " << rel_tol << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(GemmTrace, ApiRecordsTheJson) {
  Schedule sch = build_gemm_sketch();
  EXPECT_EQ(trace_to_json(sch.trace()), kGemmTraceJson);
  EXPECT_EQ(sch.trace().size(), 36u);
  EXPECT_TRUE(ir::structural_equal(sch.func(), replay_gemm_json().func()));
}

TEST(GemmTrace, JsonReEncodesExactly) {
  Trace trace = trace_from_json(kGemmTraceJson);
  EXPECT_EQ(trace_to_json(trace), kGemmTraceJson);
  EXPECT_TRUE(trace == trace_from_json(trace_to_json(trace)));
  ASSERT_TRUE(trace.postproc_start().has_value());
  EXPECT_EQ(*trace.postproc_start(), trace.size() - 1);
}

TEST(GemmTrace, ScheduledIrKeyLines) {
  Schedule sch = replay_gemm_json();
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block root @{meta_schedule.unroll_explicit = 64} {")) << text;
  EXPECT_TRUE(has_line(text, "alloc C_local: f32[64, 64] local")) << text;
  EXPECT_TRUE(has_line(text, "alloc A_shared: f32[64, 64] shared")) << text;
  EXPECT_TRUE(has_line(text, "alloc B_shared: f32[64, 64] shared")) << text;
  EXPECT_TRUE(has_line(text, "for i0_0_i1_0_fused in 8 bind blockIdx.x {")) << text;
  EXPECT_TRUE(has_line(text, "for i0_1_i1_1_fused in 2 bind vthread.x {")) << text;
  EXPECT_TRUE(has_line(text, "for i0_2_i1_2_fused in 32 bind threadIdx.x {")) << text;
  EXPECT_TRUE(has_line(text, "A_shared[v0, v1] = A[v0, v1]")) << text;
  EXPECT_TRUE(has_line(text, "B_shared[v0, v1] = B[v0, v1]")) << text;
  EXPECT_TRUE(has_line(text, "@{meta_schedule.cooperative_fetch = 2} {")) << text;
  EXPECT_TRUE(has_line(text, "@{meta_schedule.cooperative_fetch = 4} {")) << text;
  EXPECT_TRUE(has_line(text,
                       "meta_schedule.thread_extent_high_inclusive = 256, "
                       "meta_schedule.thread_extent_low_inclusive = 16, "
                       "meta_schedule.tiling_structure = \"SSSRRSRS\"}"))
      << text;
  EXPECT_TRUE(has_line(text,
                       "C_local[vi0, vi1] = C_local[vi0, vi1] + "
                       "A_shared[vi0, vr0] * B_shared[vr0, vi1]"))
      << text;
  EXPECT_TRUE(has_line(text, "C[v0, v1] = C_local[v0, v1]")) << text;
  // Nesting: the shared copies under the R0 loop, before R1; the write-back after the
  // R0 loop, still under threadIdx.x.
  size_t tx = text.find("bind threadIdx.x"), r0 = text.find("for r0_0 in 8"), a = text.find("block A_shared"),
         b = text.find("block B_shared"), r1 = text.find("for r0_1 in 2"), back = text.find("block C_local");
  EXPECT_TRUE(tx < r0 && r0 < a && a < b && b < r1 && r1 < back) << text;
}

TEST(GemmTrace, ComputesTheUnscheduledResult) {
  Schedule sch = replay_gemm_json();
  for (uint64_t seed : {3u, 11u}) EXPECT_TRUE(close_outputs(sch.original(), sch.func(), seed, 1e-5));
}

TEST(GemmTrace, ReplaysToAnEqualFunction) {
  Schedule sch = replay_gemm_json();
  EXPECT_TRUE(ir::structural_equal(sch.func(), replay_gemm_json().func()));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
