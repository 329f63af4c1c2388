// A MetaSchedule MultiLevelTilingTensorCore-style trace for a 128x128x128 f16 matmul
// (16x8x16 mma tiles innermost, shared then fragment read caches, a fragment write cache,
// blockIdx/threadIdx bindings, and the mma, fill, store and ldmatrix tensorizations),
// written as TVM-layout JSON, replayed, and run on the interpreter. Decisions are fixed.
#include <gtest/gtest.h>

#include <string>

#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"
#include "tensorcore_gemm_sketch.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

constexpr const char* kWorkload = "matmul:m=128,n=128,k=128,dtype=f16";

// The sketch through the Schedule API (tensorcore_gemm_sketch.h).
Schedule build_sketch() { return testing::tensorcore_gemm_sketch(kWorkload); }

// build_sketch()'s trace in TVM's JSON layout (REFERENCE-metaschedule.md section 3), one
// instruction a line: tiles i = 2*1*2*2*1 (x16), j = 2*2*2*1*2 (x8), k = 2*2*2 (x16), so
// blockIdx.y = 4, blockIdx.x = 2, threadIdx.y = 4 warps, each warp 2 x 2 mma tiles per
// k step; cooperative fetch 8 (A) and 4 (B), unroll 512. Tensorize stores
// [intrin_name, preserve_unit_iters] as attrs and has no outputs, as in TVM.
constexpr const char* kTraceJson =
    R"([[["GetBlock",[],["C_acc","main"],["b0"]],)"
    R"(["GetBlock",[],["root","main"],["b1"]],)"
    R"(["Annotate",["b0","\"SSSRRSRS\""],["meta_schedule.tiling_structure"],[]],)"
    R"(["CacheWrite",["b0",[]],[0,"warp"],["b2"]],)"
    R"(["CacheRead",["b0",["b0"]],[0,"shared.dyn"],["b3"]],)"
    R"(["CacheRead",["b0",["b0"]],[0,"warp"],["b4"]],)"
    R"(["CacheRead",["b0",["b0"]],[1,"shared.dyn"],["b5"]],)"
    R"(["CacheRead",["b0",["b0"]],[1,"warp"],["b6"]],)"
    R"(["GetLoops",["b0"],[],["l7","l8","l9"]],)"
    R"(["Split",["l7","None",16],[true,false],["l10","l11"]],)"
    R"(["Split",["l8","None",8],[true,false],["l12","l13"]],)"
    R"(["Split",["l9","None",16],[true,false],["l14","l15"]],)"
    R"(["SamplePerfectTile",["l10"],[5,4],["v16","v17","v18","v19","v20"]],)"
    R"(["Split",["l10","v16","v17","v18","v19","v20"],[true,false],["l21","l22","l23","l24","l25"]],)"
    R"(["SamplePerfectTile",["l12"],[5,4],["v26","v27","v28","v29","v30"]],)"
    R"(["Split",["l12","v26","v27","v28","v29","v30"],[true,false],["l31","l32","l33","l34","l35"]],)"
    R"(["SamplePerfectTile",["l14"],[3,4],["v36","v37","v38"]],)"
    R"(["Split",["l14","v36","v37","v38"],[true,false],["l39","l40","l41"]],)"
    R"(["Reorder",["l21","l31","l22","l32","l23","l33","l39","l40","l24","l34","l41","l25","l35","l11","l13","l15"],[],[]],)"
    R"(["Fuse",["l21","l31"],[true],["l42"]],)"
    R"(["Bind",["l42"],["blockIdx.y"],[]],)"
    R"(["Fuse",["l22","l32"],[true],["l43"]],)"
    R"(["Bind",["l43"],["blockIdx.x"],[]],)"
    R"(["Fuse",["l23","l33"],[true],["l44"]],)"
    R"(["Bind",["l44"],["threadIdx.y"],[]],)"
    R"(["Annotate",["b0",32],["meta_schedule.thread_extent_low_inclusive"],[]],)"
    R"(["Annotate",["b0",1024],["meta_schedule.thread_extent_high_inclusive"],[]],)"
    R"(["ReverseComputeAt",["b2","l44"],[true,-1],[]],)"
    R"(["ComputeAt",["b4","l40"],[true,-1],[]],)"
    R"(["ComputeAt",["b6","l40"],[true,-1],[]],)"
    R"(["ComputeAt",["b3","l39"],[true,-1],[]],)"
    R"(["StorageAlign",["b3"],[0,-2,32,8],[]],)"
    R"(["GetLoops",["b3"],[],["l45","l46","l47","l48","l49","l50"]],)"
    R"(["Fuse",["l49","l50"],[true],["l51"]],)"
    R"(["SampleCategorical",[],[[1,2,4,8],[0.25,0.25,0.25,0.25]],["v52"]],)"
    R"(["Annotate",["b3","v52"],["meta_schedule.cooperative_fetch"],[]],)"
    R"(["ComputeAt",["b5","l39"],[true,-1],[]],)"
    R"(["StorageAlign",["b5"],[0,-2,32,8],[]],)"
    R"(["GetLoops",["b5"],[],["l53","l54","l55","l56","l57","l58"]],)"
    R"(["Fuse",["l57","l58"],[true],["l59"]],)"
    R"(["SampleCategorical",[],[[1,2,4,8],[0.25,0.25,0.25,0.25]],["v60"]],)"
    R"(["Annotate",["b5","v60"],["meta_schedule.cooperative_fetch"],[]],)"
    R"(["SampleCategorical",[],[[0,16,64,512,1024],[0.2,0.2,0.2,0.2,0.2]],["v61"]],)"
    R"(["Annotate",["b1","v61"],["meta_schedule.unroll_explicit"],[]],)"
    R"(["EnterPostproc",[],[],[]],)"
    R"(["DecomposeReduction",["b0","l39"],[],["b62"]],)"
    R"(["Tensorize",["l11"],["mma_m16n8k16_f16f16f32",true],[]],)"
    R"(["GetLoops",["b62"],[],["l63","l64","l65","l66","l67","l68","l69"]],)"
    R"(["Tensorize",["l68"],["mma_fill_m16n8_f32",true],[]],)"
    R"(["GetLoops",["b4"],[],["l70","l71","l72","l73","l74","l75","l76"]],)"
    R"(["Split",["l75","None",16],[true,false],["l77","l78"]],)"
    R"(["Split",["l76","None",16],[true,false],["l79","l80"]],)"
    R"(["Reorder",["l77","l79","l78","l80"],[],[]],)"
    R"(["Tensorize",["l78"],["mma_ldmatrix_a_m16k16_f16",true],[]],)"
    R"(["GetLoops",["b6"],[],["l81","l82","l83","l84","l85","l86","l87"]],)"
    R"(["Split",["l86","None",16],[true,false],["l88","l89"]],)"
    R"(["Split",["l87","None",8],[true,false],["l90","l91"]],)"
    R"(["Reorder",["l88","l90","l89","l91"],[],[]],)"
    R"(["Tensorize",["l89"],["mma_ldmatrix_b_k16n8_f16",true],[]],)"
    R"(["GetLoops",["b2"],[],["l92","l93","l94","l95","l96"]],)"
    R"(["Split",["l95","None",16],[true,false],["l97","l98"]],)"
    R"(["Split",["l96","None",8],[true,false],["l99","l100"]],)"
    R"(["Reorder",["l97","l99","l98","l100"],[],[]],)"
    R"(["Tensorize",["l98"],["mma_store_m16n8_f32",true],[]]],)"
    R"([[12,[2,1,2,2,1]],[14,[2,2,2,1,2]],[16,[2,2,2]],[34,3],[40,2],[42,3]]])";

Schedule replay_json() {
  Schedule sch(workload(kWorkload));
  trace_from_json(kTraceJson).apply_to(sch);
  return sch;
}

TEST(GemmTensorCoreTrace, ApiRecordsTheJson) {
  Schedule sch = build_sketch();
  EXPECT_EQ(trace_to_json(sch.trace()), kTraceJson);
  EXPECT_EQ(sch.trace().size(), 64u);
  EXPECT_TRUE(ir::structural_equal(sch.func(), replay_json().func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(GemmTensorCoreTrace, JsonReEncodesExactly) {
  Trace trace = trace_from_json(kTraceJson);
  EXPECT_EQ(trace_to_json(trace), kTraceJson);
  EXPECT_TRUE(trace == trace_from_json(trace_to_json(trace)));
  ASSERT_TRUE(trace.postproc_start().has_value());
  EXPECT_EQ(*trace.postproc_start(), 44u);
}

TEST(GemmTensorCoreTrace, ScheduledIrKeyLines) {
  Schedule sch = replay_json();
  const std::string text = ir::print_function(sch.func());
  for (const char* line : {
           "alloc A_shared_dyn: f16[128, 128] shared.dyn",
           "alloc A_shared_dyn_warp: f16[128, 128] warp",
           "alloc C_acc_warp: f32[128, 128] warp",
           "bind blockIdx.y {",
           "bind blockIdx.x {",
           "bind threadIdx.y {",
           "@{tensor_intrin = \"mma_m16n8k16_f16f16f32\"} {",
           "@{tensor_intrin = \"mma_fill_m16n8_f32\"} {",
           "@{tensor_intrin = \"mma_ldmatrix_a_m16k16_f16\"} {",
           "@{tensor_intrin = \"mma_ldmatrix_b_k16n8_f16\"} {",
           "@{tensor_intrin = \"mma_store_m16n8_f32\"} {",
           "buffer_dim_align = \"A_shared_dyn:0:32:8\"",
           "buffer_dim_align = \"B_shared_dyn:0:32:8\"",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line;
  }
}

TEST(GemmTensorCoreTrace, SemanticsPreserved) {
  // The k loop keeps its order (k0, k1, k2, then the tile's k): bit-exact.
  Schedule sch = replay_json();
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 5));
}

TEST(GemmTensorCoreTrace, ReplaysOnAnotherShape) {
  // Tile decisions are repaired to the new extents; every tensorized tile still matches.
  Schedule sch(workload("matmul:m=64,n=32,k=64,dtype=f16"));
  trace_from_json(kTraceJson).apply_to(sch);
  EXPECT_TRUE(has_line(ir::print_function(sch.func()), "@{tensor_intrin = \"mma_m16n8k16_f16f16f32\"} {"));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 9));
}

TEST(GemmTensorCoreTrace, Bf16WorkloadIsRefusedAtTheMma) {
  // The f16 intrinsics do not take bf16 operands: replay stops at the first Tensorize.
  Schedule sch(workload("matmul:m=128,n=128,k=128,dtype=bf16"));
  try {
    trace_from_json(kTraceJson).apply_to(sch);
    ADD_FAILURE() << "expected DtypeMismatch";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::Tensorize);
    EXPECT_EQ(e.error_name(), "DtypeMismatch") << e.what();
    EXPECT_NE(e.reason().find("is bf16 where the intrinsic 'mma_m16n8k16_f16f16f32' needs f16"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dragon::schedule
