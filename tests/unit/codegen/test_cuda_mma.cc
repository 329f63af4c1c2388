// The CUDA emitter's tensor-core blocks (cuda_mma.cc, cuda_tensor_intrin.cc): the
// tensor-core GEMM sketch's fill, ldmatrix, mma and store blocks print as warp-level PTX
// helpers instead of their scalar reference loops, the source compiles with NVRTC to
// sm_90a (no GPU needed), and blocks the emitter cannot place are refused or stay scalar.
// Running the kernels against the interpreter is tests/gpu/test_gpu_ops.cc.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen_test_util.h"
#include "cuda_prelude.h"
#include "cuda_warp_intrin.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/support/error.h"
#include "default_gpu_schedule.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"

namespace dragon::codegen {
namespace {

constexpr const char* kF16Gemm = "matmul:m=128,n=128,k=128,dtype=f16";
constexpr const char* kBf16Gemm = "matmul:m=128,n=128,k=128,dtype=bf16";
constexpr const char* kF16GemmTransB = "matmul:m=128,n=128,k=128,trans_b=true,dtype=f16";

// The tensor-core sketch with AutoBind on the output cast it leaves unbound, lowered;
// `cooperative`: its shared copies spread over the warps and lanes first.
ir::PrimFunc lowered_sketch(const std::string& spec, int64_t row_padding = 8, bool cooperative = false) {
  schedule::Schedule sch = schedule::testing::tensorcore_gemm_sketch(spec, row_padding);
  if (cooperative && search::rewrite_cooperative_fetch(sch) != 2) throw InternalError("the sketch has two copies");
  testing::apply_default_gpu_schedule(sch);
  return lower::lower(sch.func(), lower::Target::cuda_h200()).func;
}

// Rewrites every loop of a flat function with `edit` (annotations, thread tags).
class EditLoops final : public ir::StmtExprMutator {
 public:
  explicit EditLoops(std::function<void(std::string& tag, ir::Annotations& annotations)> edit)
      : edit_(std::move(edit)) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt body = visit(op->body);
    std::string tag = op->thread_tag;
    ir::Annotations annotations = op->annotations;
    edit_(tag, annotations);
    return ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, tag, annotations);
  }

 private:
  std::function<void(std::string&, ir::Annotations&)> edit_;
};

ir::PrimFunc edit_loops(const ir::PrimFunc& f, std::function<void(std::string&, ir::Annotations&)> edit) {
  return f.with_body(EditLoops(std::move(edit)).visit(f->body));
}

size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

std::string refusal(const ir::PrimFunc& flat) {
  try {
    generate_cuda(flat, lower::Target::cuda_h200());
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

// Every registered mma.sync intrinsic (f16/bf16 m16n8k16, tf32 m16n8k8, loads, fill,
// store) has a row in the emitter's table: the codegen spells the names without including
// the schedule's registry, so this is where a misspelling shows.
TEST(CudaMma, EveryRegisteredMmaIntrinsicHasAPlanner) {
  const auto& planners = warp_intrin_planners();
  int tf32 = 0;
  for (const std::string& name : schedule::tensor_intrin_names()) {
    if (name.rfind("mma_", 0) != 0) continue;
    EXPECT_EQ(planners.count(name), 1u) << name;
    if (name.find("tf32") != std::string::npos || name.find("_f32") + 4 == name.size()) ++tf32;
  }
  for (int passes : {1, 3}) {
    for (bool trans_b : {false, true}) {
      EXPECT_EQ(planners.count(schedule::tf32_mma_intrin_name(passes, trans_b)), 1u);
      for (const char* narrow : {"bf16", "f16"}) {
        EXPECT_EQ(planners.count(schedule::tf32_mma_intrin_name(passes, trans_b, "f32", narrow)), 1u) << narrow;
        EXPECT_EQ(planners.count(schedule::tf32_mma_intrin_name(passes, trans_b, narrow, "f32")), 1u) << narrow;
      }
    }
  }
  // Four tf32 mma on f32 operands and 16 with one 16-bit operand, five f32 loads (A and B
  // as stored, B stored [n, k], and A and B staged by columns), the shared fill and store.
  EXPECT_EQ(tf32, 4 + 16 + 5 + 2);
}

// prepare_tf32_fragments_once: fragments only loads write and only 3xTF32 mma read are
// split at their loads (the small parts in the fragment's second half) and the mma takes
// the parts; one-pass ones are rounded there; an mma one of whose operands another block
// also reads (a store) prepares neither, so no operand is rounded or split twice.
TEST(CudaMma, Tf32FragmentsArePreparedOnceAtTheirLoadsOrNotAtAll) {
  const ir::Buffer a = ir::Buffer::make("A_warp", ir::DataType::f32(), {32, 16}, "warp");  // 16 a lane
  const ir::Buffer b = ir::Buffer::make("B_warp", ir::DataType::f32(), {16, 16}, "warp");  // 8 a lane
  const ir::Buffer c = ir::Buffer::make("C_warp", ir::DataType::f32(), {32, 16}, "warp");
  const ir::Buffer tile = ir::Buffer::make("A_shared", ir::DataType::f32(), {32, 16}, "shared");
  const ir::Buffer out = ir::Buffer::make("D", ir::DataType::f32(), {32, 16}, "global");
  auto i32 = [](int64_t v) { return ir::make_const(ir::DataType::i32(), static_cast<double>(v)); };
  // One ForNode per call: the map is keyed by the tensorized loop each call replaces.
  std::vector<ir::Stmt> units;
  auto unit = [&]() {
    units.push_back(ir::ForNode::make(ir::Var("u"), i32(0), i32(1), ir::ForKind::kSerial, ir::EvaluateNode::make(i32(0))));
    return units.back().as<ir::ForNode>();
  };
  auto calls_of = [&](const char* mma, bool b_stored) {
    std::unordered_map<const ir::ForNode*, WarpCall> calls;
    calls.emplace(unit(), WarpCall{"dragon_tf32_ldmatrix_a_m16k8", {{a, i32(4)}, {tile, i32(0)}, {{}, i32(36)}}});
    calls.emplace(unit(), WarpCall{"dragon_tf32_load_b_k8n8", {{b, i32(2)}, {tile, i32(0)}, {{}, i32(40)}}});
    calls.emplace(unit(), WarpCall{mma, {{c, i32(0)}, {a, i32(4)}, {b, i32(2)}}});
    if (b_stored) calls.emplace(unit(), WarpCall{"dragon_mma_store_m16n8_f32", {{out, i32(0)}, {{}, i32(16)}, {b, i32(0)}}, true});
    return calls;
  };
  auto helpers = [](const std::unordered_map<const ir::ForNode*, WarpCall>& calls) {
    std::set<std::string> out;
    for (const auto& [u, call] : calls) out.insert(call.helper);
    return out;
  };
  auto offsets = [](const WarpCall& call) {
    std::vector<std::string> out;
    for (const WarpHelperArg& arg : call.args) out.push_back(ir::print_expr(arg.offset));
    return out;
  };

  auto split = calls_of("dragon_tf32_mma_m16n8k8_3x", false);
  EXPECT_EQ(prepare_tf32_fragments_once(split), (std::unordered_set<const ir::BufferNode*>{a.get(), b.get()}));
  EXPECT_EQ(helpers(split), (std::set<std::string>{"dragon_tf32_ldmatrix_a_m16k8_split", "dragon_tf32_load_b_k8n8_split",
                                                   "dragon_tf32_mma_m16n8k8_3x_presplit"}));
  for (const auto& [u, call] : split) {
    if (call.helper == "dragon_tf32_mma_m16n8k8_3x_presplit") {
      EXPECT_EQ(offsets(call), (std::vector<std::string>{"0", "4", "4 + 16", "2", "2 + 8"}));
    } else if (call.helper == "dragon_tf32_ldmatrix_a_m16k8_split") {
      EXPECT_EQ(offsets(call), (std::vector<std::string>{"4", "4 + 16", "0", "36"}));
    }
  }

  auto rounded = calls_of("dragon_tf32_mma_m16n8k8", false);
  EXPECT_TRUE(prepare_tf32_fragments_once(rounded).empty());
  EXPECT_EQ(helpers(rounded), (std::set<std::string>{"dragon_tf32_ldmatrix_a_m16k8_rounded",
                                                     "dragon_tf32_load_b_k8n8_rounded",
                                                     "dragon_tf32_mma_m16n8k8_prerounded"}));

  for (const char* mma : {"dragon_tf32_mma_m16n8k8_3x", "dragon_tf32_mma_m16n8k8"}) {
    auto neither = calls_of(mma, true);
    EXPECT_TRUE(prepare_tf32_fragments_once(neither).empty()) << mma;
    EXPECT_EQ(helpers(neither), (std::set<std::string>{"dragon_tf32_ldmatrix_a_m16k8", "dragon_tf32_load_b_k8n8", mma,
                                                       "dragon_mma_store_m16n8_f32"}))
        << mma;
  }
}

TEST(CudaMma, GemmBlocksBecomeWarpLevelCode) {
  CudaSource src = generate_cuda(lowered_sketch(kF16Gemm), lower::Target::cuda_h200());
  const std::string& code = src.code;
  // The prelude's PTX, and one helper call per tensorized block (each under its loops).
  EXPECT_EQ(count(code, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), 1u);
  EXPECT_EQ(count(code, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 1u);
  EXPECT_EQ(count(code, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), 1u);
  EXPECT_EQ(count(code, "__cvta_generic_to_shared"), 1u);
  for (const char* call : {"dragon_mma_fill_m16n8_f32(C_acc_warp + ", "dragon_ldmatrix_a_m16k16(A_shared_dyn_warp + ",
                           "dragon_ldmatrix_b_k16n8(B_shared_dyn_warp + ", "dragon_mma_m16n8k16_f16(C_acc_warp + ",
                           "dragon_mma_store_m16n8_f32(C_acc + "}) {
    EXPECT_EQ(count(code, call), 1u) << call;
  }
  // No scalar reference loop is left: the unit loops and the tile loops are gone.
  EXPECT_EQ(count(code, "scalar code"), 0u);
  for (const char* loop : {"_o_unit", "i0_1_init <", "i0_1 <", "r0_1 <", "ax0_2_1 <", "ax0_3_1 <", "ax0_1_1 <"}) {
    EXPECT_EQ(count(code, loop), 0u) << loop;
  }
  // Fragments per lane: 512 / 32 accumulators (4 tiles of 4), A 1024 / 32, B 512 / 32.
  EXPECT_EQ(count(code, "float C_acc_warp[16];"), 1u);
  EXPECT_EQ(count(code, "__half A_shared_dyn_warp[32];"), 1u);
  EXPECT_EQ(count(code, "__half B_shared_dyn_warp[16];"), 1u);
  // ldmatrix rows of 32 + 8 halves; the store's rows are C's 128 columns.
  EXPECT_NE(code.find(", 72, "), std::string::npos);
  EXPECT_NE(code.find(", 40, "), std::string::npos);
  EXPECT_NE(code.find(", 128, C_acc_warp + "), std::string::npos);
  // The tensor-core kernel gets the 32 lanes in x and keeps its 4 warps in y; the cast
  // kernel after it is unchanged.
  ASSERT_EQ(src.kernels.size(), 2u);
  EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{32, 4, 1}));
  EXPECT_EQ(src.kernels[1].block, (std::array<int64_t, 3>{256, 1, 1}));
  // Code outside the warp-level blocks (the shared-memory copies) runs on lane 0.
  EXPECT_EQ(count(code, "_lane == 0)"), 1u);
  // Every loop over the lanes unrolls (fragment slots become constants, loads go in flight
  // together): fill 2, r0_0_1, ldmatrix A 2 and B 2, mma 5, store 2. Not the k-step loop
  // r0_0_0: its step, a shared fetch of 6144 elements included, is past the unroll budget.
  EXPECT_EQ(count(code, "#pragma unroll\n"), 14u);
  auto unrolled = [&](const std::string& loop) {
    const size_t at = code.find(loop);
    EXPECT_NE(at, std::string::npos) << loop;
    const size_t line_start = code.rfind('\n', at);
    const size_t previous_start = code.rfind('\n', line_start - 1);
    return code.substr(previous_start, line_start - previous_start).find("#pragma unroll") != std::string::npos;
  };
  EXPECT_FALSE(unrolled("r0_0_0 = 0"));
  EXPECT_TRUE(unrolled("r0_0_1 = 0"));
  if (::testing::Test::HasFailure()) std::printf("%s\n", code.c_str());
}

TEST(CudaMma, Bf16GemmUsesTheBf16Instruction) {
  std::string code = generate_cuda(lowered_sketch(kBf16Gemm), lower::Target::cuda_h200()).code;
  EXPECT_EQ(count(code, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 1u);
  EXPECT_EQ(count(code, "dragon_mma_m16n8k16_bf16(C_acc_warp + "), 1u);
  EXPECT_EQ(count(code, "scalar code"), 0u);
}

TEST(CudaMma, TransposedBUsesUntransposedLdmatrix) {
  std::string code = generate_cuda(lowered_sketch(kF16GemmTransB), lower::Target::cuda_h200()).code;
  EXPECT_EQ(count(code, "dragon_ldmatrix_b_trans_n8k16(B_shared_dyn_warp + "), 1u) << code;
  EXPECT_EQ(count(code, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"), 1u);
  EXPECT_EQ(count(code, "dragon_mma_m16n8k16_f16(C_acc_warp + "), 1u);
  EXPECT_EQ(count(code, "scalar code"), 0u);
}

TEST(CudaMma, SourcesWithoutTensorBlocksHaveNoWarpHelpers) {
  // The helpers join the prelude only where a kernel uses them (golden sources unchanged).
  ir::PrimFunc plain = edit_loops(lowered_sketch(kF16Gemm), [](std::string&, ir::Annotations& a) {
    if (a.count("tensor_intrin") != 0) a["tensor_intrin"] = std::string("not_an_intrinsic");
  });
  std::string code = generate_cuda(plain, lower::Target::cuda_h200()).code;
  EXPECT_EQ(count(code, "mma.sync"), 0u);
  EXPECT_EQ(count(code, "ldmatrix"), 0u);
}

TEST(CudaMma, CooperativeCopiesRunOnEveryLaneOfEveryWarp) {
  // Without the rewrite, the shared copies are lane-0 code: one lane per warp copies the
  // whole tile. With it, threadIdx.x (the lanes, extent 32) and threadIdx.y (the warps)
  // index the copy, which then runs unguarded on all 128 threads.
  std::string lane0 = generate_cuda(lowered_sketch(kF16Gemm), lower::Target::cuda_h200()).code;
  EXPECT_NE(lane0.find("_lane == 0)"), std::string::npos) << lane0;
  CudaSource src = generate_cuda(lowered_sketch(kF16Gemm, 8, true), lower::Target::cuda_h200());
  EXPECT_EQ(src.code.find("_lane == 0)"), std::string::npos) << src.code;
  EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{32, 4, 1}));
  // Each thread moves 8 halves of A's tile with one 16-byte load and store.
  size_t copy = src.code.find("*(int4*)(A_shared_dyn + ");
  ASSERT_NE(copy, std::string::npos) << src.code;
  std::string copy_line = src.code.substr(copy, src.code.find('\n', copy) - copy);
  EXPECT_NE(copy_line.find("threadIdx_x"), std::string::npos) << copy_line;
  EXPECT_NE(copy_line.find("threadIdx_y"), std::string::npos) << copy_line;
}

TEST(CudaMma, CooperativeSketchComputesTheGemm) {
  // The rewritten schedule is the same computation (the interpreter runs its thread loops
  // in sequence); on the GPU, tests/gpu runs it against the interpreter.
  schedule::Schedule sch = schedule::testing::tensorcore_gemm_sketch(kF16Gemm);
  ir::PrimFunc before = sch.func();
  ASSERT_EQ(search::rewrite_cooperative_fetch(sch), 2);
  std::vector<tensor::HostTensor> expected = interp::make_arguments(before, 3, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(before, expected);
  interp::run(sch.func(), actual);
  EXPECT_TRUE(testing::outputs_match(before, expected, actual));
}

TEST(CudaMma, RefusesLaneCodeReadingLaneZerosLocalValues) {
  // A kernel binding threadIdx.x to the lanes must not feed lane-spread code from a
  // "local" buffer that only lane 0 wrote: the emitter refuses instead of reading garbage.
  // Planted: each cooperative store to A's shared tile first sets a local t (lane-0 code:
  // it does not read the lane) and then adds t (lane code).
  struct PlantLocal final : ir::StmtExprMutator {
    using ir::StmtExprMutator::visit_;
    ir::Stmt visit_(const ir::BufferStoreNode* op) override {
      if (op->buffer->name != "A_shared_dyn") return ir::Stmt(op);
      ir::Buffer t = ir::Buffer::make("t", op->buffer->dtype, {1}, "local");
      ir::Expr zero = ir::make_const(op->buffer->dtype, 0.0);
      return ir::AllocateNode::make(
          t, ir::SeqStmtNode::make({ir::BufferStoreNode::make(t, zero, {ir::make_const(ir::DataType::i32(), 0.0)}),
                                    ir::BufferStoreNode::make(op->buffer,
                                                              op->value + ir::BufferLoadNode::make(
                                                                              t, {ir::make_const(ir::DataType::i32(), 0.0)}),
                                                              op->indices)}));
    }
  };
  ir::PrimFunc f = lowered_sketch(kF16Gemm, 8, true);
  std::string why = refusal(f.with_body(PlantLocal().visit(f->body)));
  EXPECT_NE(why.find("reads the local buffer t, which lane-0 code writes"), std::string::npos) << why;
}

TEST(CudaMma, GemmCompilesToSm90aCubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::vector<Expected<runtime::CudaBuild>> builds =
      runtime::compile_cuda_all({lowered_sketch(kF16Gemm), lowered_sketch(kBf16Gemm), lowered_sketch(kF16GemmTransB),
                                 lowered_sketch(kF16Gemm, 8, true)},
                                lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), 4u);
  for (auto& build : builds) {
    ASSERT_TRUE(build.ok()) << build.error().describe();
    EXPECT_EQ(build.value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
    EXPECT_NE(build.value().source.code.find("mma.sync.aligned.m16n8k16"), std::string::npos);
  }
}

// Every tf32 helper compiles for sm_90a, each template at each type it is printed with:
// the split loads and the presplit mma, and the mixed mma of an f32 operand with a bf16 or
// f16 one in either position (two overloads of the 3xTF32 one; no sketch of today's
// suites prints the 16-bit A one).
TEST(CudaMma, EveryTf32HelperCompilesAtEveryOperandType) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  std::string source = std::string(half_headers_prelude()) + cuda_common_prelude() +
                       std::string(shared_address_prelude()) + std::string(mma_prelude()) +
                       std::string(mma_tf32_prelude()) + std::string(mma_tf32_mixed_prelude());
  source += R"(
extern "C" __global__ void helpers(float* out, const float* f32_tile, const __nv_bfloat16* bf16_tile,
                                   const __half* f16_tile) {
  const int lane = threadIdx.x;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  float a[8], b[4];
  dragon_tf32_ldmatrix_a_m16k8_split(a, a + 4, f32_tile, 12, lane);
  dragon_tf32_load_a_trans_k8m16_split(a, a + 4, f32_tile, 24, lane);
  dragon_tf32_load_b_k8n8_split(b, b + 2, f32_tile, 24, lane);
  dragon_tf32_load_b_trans_n8k8_split(b, b + 2, f32_tile, 12, lane);
  dragon_tf32_mma_m16n8k8_3x_presplit(c, a, a + 4, b, b + 2, lane);
  __nv_bfloat16 a16[4], b16[2];
  __half h16[4], hb16[2];
  dragon_tf32_load_a_m16k8(a16, bf16_tile, 12, lane);
  dragon_tf32_load_b_k8n8(b16, bf16_tile, 24, lane);
  dragon_tf32_load_a_trans_k8m16(h16, f16_tile, 24, lane);
  dragon_tf32_load_b_trans_n8k8(hb16, f16_tile, 12, lane);
  dragon_tf32_mma_m16n8k8_3x_mixed(c, a, b16, lane);
  dragon_tf32_mma_m16n8k8_3x_mixed(c, a16, b, lane);
  dragon_tf32_mma_m16n8k8_3x_mixed(c, a, hb16, lane);
  dragon_tf32_mma_m16n8k8_3x_mixed(c, h16, b, lane);
  dragon_tf32_mma_m16n8k8_mixed(c, a, b16, lane);
  dragon_tf32_mma_m16n8k8_mixed(c, h16, b, lane);
  for (int r = 0; r < 4; ++r) out[4 * lane + r] = c[r];
}
)";
  Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(source, "tf32_helpers", runtime::NvrtcOptions{}, testing::test_cache());
  ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
  EXPECT_EQ(cubin.value().bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
}

TEST(CudaMma, UnknownIntrinsicKeepsTheKernelScalar) {
  // A kernel with a tensorized block no planner knows stays scalar as a whole (fragments as
  // whole tiles per thread, the interpreter's semantics), saying why.
  ir::PrimFunc f = edit_loops(lowered_sketch(kF16Gemm), [](std::string&, ir::Annotations& a) {
    auto it = a.find("tensor_intrin");
    if (it != a.end() && std::get<std::string>(it->second) == "mma_fill_m16n8_f32") {
      it->second = std::string("my_fill");
    }
  });
  CudaSource src = generate_cuda(f, lower::Target::cuda_h200());
  EXPECT_EQ(count(src.code, "no warp-level printer for tensor_intrin my_fill"), 5u) << src.code;
  EXPECT_EQ(count(src.code, "dragon_mma_"), 0u);
  EXPECT_EQ(count(src.code, "float C_acc_warp[512];  // warp"), 1u);
  EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{1, 4, 1}));
}

TEST(CudaMma, RefusesUnalignedLdmatrixRows) {
  // Rows of 32 + 4 halves are 72 bytes: ldmatrix needs each row on 16 bytes.
  std::string why = refusal(lowered_sketch(kF16Gemm, 4));
  EXPECT_NE(why.find("kernel matmul_kernel0 has tensor-core blocks"), std::string::npos) << why;
  EXPECT_NE(why.find("mma_ldmatrix_a_m16k16_f16 block does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("16-byte aligned rows"), std::string::npos) << why;
}

TEST(CudaMma, RefusesAKernelBindingThreadIdxX) {
  ir::PrimFunc f = edit_loops(lowered_sketch(kF16Gemm), [](std::string& tag, ir::Annotations&) {
    if (tag == "threadIdx.y") tag = "threadIdx.x";
  });
  std::string why = refusal(f);
  EXPECT_NE(why.find("matmul_kernel0"), std::string::npos) << why;
  EXPECT_NE(why.find("it binds threadIdx.x to 4"), std::string::npos) << why;
}

TEST(CudaMma, RefusesFragmentAccessOutsideTensorBlocks) {
  // Without its annotation the fill is a plain loop writing the accumulator fragment, which
  // per lane holds only its share of each tile.
  ir::PrimFunc f = edit_loops(lowered_sketch(kF16Gemm), [](std::string&, ir::Annotations& a) {
    auto it = a.find("tensor_intrin");
    if (it != a.end() && std::get<std::string>(it->second) == "mma_fill_m16n8_f32") a.erase(it);
  });
  std::string why = refusal(f);
  EXPECT_NE(why.find("a store to C_acc_warp is outside any tensorized block"), std::string::npos) << why;
}

// KernelBench 87's output tile (a 1x1 conv2d with 2^31 outputs), as lowering indexes it:
// the row index stays i32 under an i64 cast. Its loops' ranges are the kernel's.
struct WideOutputTile {
  ir::Var by{"blockIdx_y"}, bx{"blockIdx_x"}, ty{"threadIdx_y"}, ax0_1_0{"ax0_1_0"};
  ir::Var row{"ax0_1_1"}, col{"ax1_1_1"};
  TileNest nest{{row, col}, {16, 8}, nullptr};
  ir::Expr i64(const ir::Expr& e) const { return ir::cast(ir::DataType::i64(), e); }
  ir::Expr index() const {
    return i64(ir::floordiv(by, 4) * 131072 + bx * 256 + ax0_1_0 * 16 + row) * int64_t{128} +
           i64(ir::floormod(by, 4) * 32 + ty * 8 + col);
  }
  ir::Analyzer analyzer(bool bound_blocks = true) const {
    ir::Analyzer a;
    if (bound_blocks) {
      a.bind(by, 0, 512);
      a.bind(bx, 0, 512);
    }
    a.bind(ty, 0, 4);
    a.bind(ax0_1_0, 0, 16);
    return a;
  }
};

TEST(CudaMma, DecomposeReadsThroughTheI64CastOfAWideBuffersIndex) {
  WideOutputTile t;
  const ir::Analyzer analyzer = t.analyzer();
  std::optional<Affine> a = decompose(t.index(), t.nest, analyzer);
  ASSERT_TRUE(a.has_value()) << ir::print_expr(t.index());
  EXPECT_EQ(a->coefs, (std::vector<int64_t>{128, 1}));
  // The base is the index at the tile's first element, still in i64.
  ASSERT_EQ(a->base.dtype(), ir::DataType::i64()) << ir::print_expr(a->base);
  auto wide = [&](const ir::Var& v) { return t.i64(v); };
  ir::Expr expected = (ir::floordiv(wide(t.by), 4) * 131072 + wide(t.bx) * 256 + wide(t.ax0_1_0) * 16) * 128 +
                      ir::floormod(wide(t.by), 4) * 32 + wide(t.ty) * 8;
  EXPECT_TRUE(analyzer.can_prove_equal(a->base, expected)) << ir::print_expr(a->base);
  // What memory_tile and fragment_slot then prove of it.
  EXPECT_TRUE(analyzer.can_prove(ir::eq(ir::floormod(a->base, 8), 0))) << ir::print_expr(a->base);
}

// A GEMM of 2^31 outputs: its f32 accumulator C_acc is indexed in i64 with each row index
// i32 under a cast, and its store tile is still one mma store (KernelBench 87, a 1x1
// conv2d of as many outputs, had every tensor-core candidate refused), compiling with NVRTC.
TEST(CudaMma, GemmPast2To31OutputsKeepsItsTensorCoreBlocks) {
  schedule::testing::TensorCoreDecisions d;
  d.i = {16, 64, 2, 2, 1};   // 4096 row tiles of 16; blockIdx.y = 16 * 16 (gridDim.y <= 65535)
  d.j = {16, 128, 2, 1, 1};  // 4096 column tiles of 8
  schedule::Schedule sch = schedule::testing::tensorcore_gemm_sketch("matmul:m=65536,n=32768,k=128,dtype=f16", 8, d);
  testing::apply_default_gpu_schedule(sch);
  ir::PrimFunc flat = lower::lower(sch.func(), lower::Target::cuda_h200()).func;
  CudaSource src = generate_cuda(flat, lower::Target::cuda_h200());
  const std::string& code = src.code;
  EXPECT_EQ(count(code, "dragon_mma_store_m16n8_f32(C_acc + "), 1u) << code;
  EXPECT_EQ(count(code, "dragon_mma_m16n8k16_f16(C_acc_warp + "), 1u);
  EXPECT_EQ(count(code, "scalar code"), 0u);
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all({flat}, lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), 1u);
  ASSERT_TRUE(builds[0].ok()) << builds[0].error().describe();
  EXPECT_EQ(builds[0].value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
}

// decompose reads a tile's coefficients straight off the simplified index where it is a
// sum of constant multiples of the tile's loops, and otherwise by differences at unit
// points with a proof; both must give the same affine forms and refuse the same accesses.
struct SmallTile {
  ir::Var i{"i"}, j{"j"}, outer{"outer"};
  TileNest nest{{i, j}, {16, 8}, nullptr};
  ir::Analyzer analyzer() const {
    ir::Analyzer a;
    a.bind(outer, 0, 64);
    return a;
  }
};

TEST(CudaMma, DecomposeReadsCoefficientsOfAnAffineIndex) {
  SmallTile t;
  // outer * 1024 + i * 72 + j - 3 * i: the coefficient of i gathers both of its terms.
  ir::Expr index = t.outer * 1024 + t.i * 72 + t.j - 3 * t.i;
  std::optional<Affine> a = decompose(index, t.nest, t.analyzer());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->coefs, (std::vector<int64_t>{69, 1}));
  EXPECT_TRUE(t.analyzer().can_prove_equal(a->base, t.outer * 1024)) << ir::print_expr(a->base);
}

TEST(CudaMma, DecomposeSeesThroughALoopTheBoundsRemove) {
  SmallTile t;
  // floordiv(outer * 16 + i, 16) is outer for i < 16: i's coefficient is 0; and j
  // appears once under a floordiv its extent leaves whole.
  ir::Expr index = ir::floordiv(t.outer * 16 + t.i, 16) * 256 + ir::floormod(t.outer * 8 + t.j, 8) * 2;
  std::optional<Affine> a = decompose(index, t.nest, t.analyzer());
  ASSERT_TRUE(a.has_value()) << ir::print_expr(index);
  EXPECT_EQ(a->coefs, (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(t.analyzer().can_prove_equal(a->base, t.outer * 256)) << ir::print_expr(a->base);
}

TEST(CudaMma, DecomposeRefusesIndicesNotAffineInTheTile) {
  SmallTile t;
  for (const ir::Expr& index : {t.i * t.j + t.outer, ir::floormod(t.i, 4) * 8 + t.j, t.i * t.outer + t.j,
                                ir::floordiv(t.j + t.outer, 4)}) {
    EXPECT_FALSE(decompose(index, t.nest, t.analyzer()).has_value()) << ir::print_expr(index);
  }
}

TEST(CudaMma, DecomposeKeepsACastWhoseIndexMightWrap) {
  // Unbounded block indices: the row index might wrap in i32, so i64(row index) is not
  // the row index computed in i64, and the access is not read as a tile.
  WideOutputTile t;
  EXPECT_FALSE(decompose(t.index(), t.nest, t.analyzer(false)).has_value());
}

}  // namespace
}  // namespace dragon::codegen
