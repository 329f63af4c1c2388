// Hopper's wgmma on CUDA (src/codegen/cuda_wgmma.cc, schedule/tensor_intrin_wgmma.cc): the
// 64-bit shared-memory matrix descriptor's bit fields against values worked out by hand
// from the PTX ISA, the 128-byte swizzle, the registered family, and the wgmma GEMM
// sketch: it computes the GEMM on the interpreter, prints as warpgroup code (descriptors,
// fence, mma_async, commit and wait groups, swizzled copies) and compiles with NVRTC to
// sm_90a (no GPU needed). Running it on the H200 is tests/gpu/test_gpu_wgmma.cc.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "codegen_test_util.h"
#include "cuda_warp_intrin.h"
#include "default_gpu_schedule.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/codegen/wgmma_descriptor.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/functor.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "dragon/support/error.h"
#include "unit/schedule/wgmma_gemm_sketch.h"

namespace dragon::codegen {
namespace {

constexpr const char* kF16 = "matmul:m=128,n=128,k=128,trans_b=true,dtype=f16";
constexpr const char* kBf16 = "matmul:m=128,n=128,k=128,trans_b=true,dtype=bf16";

size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

ir::PrimFunc lowered(const std::string& spec, schedule::testing::WgmmaGemmTiles tiles = {}) {
  schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(spec, tiles);
  testing::apply_default_gpu_schedule(sch);  // the output cast the sketch leaves unbound
  return lower::lower(sch.func(), lower::Target::cuda_h200()).func;
}

// ---- The descriptor (PTX ISA: matrix descriptor format of wgmma) -------------------------

TEST(WgmmaDescriptor, FieldsSitAtThePtxBitPositions) {
  // Start address 0x400 -> 0x40 in bits 0-13; LBO 16 -> 1 at bit 16; SBO 1024 -> 64 at
  // bit 32; base offset 0; 128-byte swizzle = 1 in bits 62-63.
  EXPECT_EQ(wgmma_kmajor_swizzle128_descriptor(0x400), 0x4000004000010040ull);
  EXPECT_EQ(encode_wgmma_descriptor({0x400, 16, 1024, 0, WgmmaSwizzle::kSwizzle128B}), 0x4000004000010040ull);
  // Each field alone, at its largest value: 14 ones at bits 0, 16 and 32; 3 at 49; 2 at 62.
  EXPECT_EQ(encode_wgmma_descriptor({0x3FFF0, 0, 0, 0, WgmmaSwizzle::kNone}), 0x3FFFull);
  EXPECT_EQ(encode_wgmma_descriptor({0, 0x3FFF0, 0, 0, WgmmaSwizzle::kNone}), 0x3FFFull << 16);
  EXPECT_EQ(encode_wgmma_descriptor({0, 0, 0x3FFF0, 0, WgmmaSwizzle::kNone}), 0x3FFFull << 32);
  EXPECT_EQ(encode_wgmma_descriptor({0, 0, 0, 7, WgmmaSwizzle::kNone}), 7ull << 49);
  EXPECT_EQ(encode_wgmma_descriptor({0, 0, 0, 0, WgmmaSwizzle::kSwizzle64B}), 2ull << 62);
  EXPECT_EQ(encode_wgmma_descriptor({0, 0, 0, 0, WgmmaSwizzle::kSwizzle32B}), 3ull << 62);
  // The k steps of a 64-wide K-major tile advance the start by 32 bytes (2 in the field).
  EXPECT_EQ(wgmma_kmajor_swizzle128_descriptor(0x400 + 32) - wgmma_kmajor_swizzle128_descriptor(0x400), 2ull);
}

TEST(WgmmaDescriptor, DecodesWhatItEncodes) {
  WgmmaDescriptorFields f{0x12340, 0x80, 0x400, 3, WgmmaSwizzle::kSwizzle128B};
  WgmmaDescriptorFields g = decode_wgmma_descriptor(encode_wgmma_descriptor(f));
  EXPECT_EQ(g.start_address, f.start_address);
  EXPECT_EQ(g.leading_byte_offset, f.leading_byte_offset);
  EXPECT_EQ(g.stride_byte_offset, f.stride_byte_offset);
  EXPECT_EQ(g.base_offset, f.base_offset);
  EXPECT_EQ(g.swizzle, f.swizzle);
}

TEST(WgmmaDescriptor, RefusesWhatTheFieldsCannotHold) {
  EXPECT_THROW(encode_wgmma_descriptor({0x408, 16, 1024, 0, WgmmaSwizzle::kNone}), InternalError);   // not /16
  EXPECT_THROW(encode_wgmma_descriptor({0x40000, 16, 1024, 0, WgmmaSwizzle::kNone}), InternalError);  // 18 bits
  EXPECT_THROW(encode_wgmma_descriptor({0, 16, 1024, 8, WgmmaSwizzle::kNone}), InternalError);        // 4 bits
}

TEST(WgmmaDescriptor, DevicePreludeEncodesTheSameFields) {
  // The device helper prints the K-major 128-byte constants the host encoder produces.
  std::string prelude = wgmma_prelude({});
  EXPECT_NE(prelude.find("(1ull << 16) | (64ull << 32) | (1ull << 62)"), std::string::npos) << prelude;
  EXPECT_EQ(wgmma_kmajor_swizzle128_descriptor(0), (1ull << 16) | (64ull << 32) | (1ull << 62));
}

TEST(WgmmaSwizzle, Swizzle128XorsTheChunkWithTheRowInItsAtom) {
  EXPECT_EQ(swizzle128_b16(0), 0);
  EXPECT_EQ(swizzle128_b16(5), 5);            // row 0: unchanged
  EXPECT_EQ(swizzle128_b16(64), 72);          // row 1, chunk 0 -> chunk 1
  EXPECT_EQ(swizzle128_b16(64 + 8), 64);      // row 1, chunk 1 -> chunk 0
  EXPECT_EQ(swizzle128_b16(7 * 64 + 7 * 8 + 3), 7 * 64 + 3);  // row 7, chunk 7 -> chunk 0
  EXPECT_EQ(swizzle128_b16(8 * 64 + 8 + 1), 8 * 64 + 8 + 1);  // the next atom's row 0
  // A bijection of each 1024-byte atom (512 halves) onto itself that keeps 8-element chunks.
  std::set<int64_t> seen;
  for (int64_t e = 512; e < 1024; ++e) {
    int64_t p = swizzle128_b16(e);
    EXPECT_GE(p, 512);
    EXPECT_LT(p, 1024);
    EXPECT_EQ(p % 8, e % 8);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 512u);
}

// ---- The registered family ------------------------------------------------------------

TEST(WgmmaIntrin, FamilyIsRegisteredAndEveryMemberHasAPlanner) {
  const auto& planners = warp_intrin_planners();
  int members = 0;
  for (const std::string& name : schedule::tensor_intrin_names()) {
    if (name.rfind("wgmma_", 0) != 0) continue;
    ++members;
    EXPECT_EQ(planners.count(name), 1u) << name;
  }
  EXPECT_EQ(members, 2 * 32 + 2);  // f16 and bf16 for N = 8..256, the fill and the store
  const schedule::TensorIntrin* mma = schedule::find_tensor_intrin("wgmma_m64n256k16_bf16bf16f32_trans_b");
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->scopes, (std::vector<std::vector<std::string>>{
                             {"shared", "shared.dyn"}, {"shared", "shared.dyn"}, {"warp"}}));
  EXPECT_EQ(schedule::wgmma_intrin_name("f16", 64), "wgmma_m64n64k16_f16f16f32_trans_b");
  EXPECT_EQ(schedule::find_tensor_intrin("wgmma_m64n260k16_f16f16f32_trans_b"), nullptr);
}

// ---- The GEMM sketch --------------------------------------------------------------------

TEST(CudaWgmma, SketchComputesTheGemmOnTheInterpreter) {
  struct Case {
    const char* spec;
    schedule::testing::WgmmaGemmTiles tiles;
  };
  for (const Case& c : {Case{kF16, {2, 128, 0}}, Case{kBf16, {2, 128, 0}},
                        Case{"matmul:m=64,n=128,k=192,trans_b=true,dtype=f16", {1, 64, 0}},
                        Case{"matmul:m=128,n=256,k=64,trans_b=true,dtype=bf16", {2, 256, 0}},
                        Case{"matmul:m=128,n=48,k=64,trans_b=true,dtype=f16", {2, 24, 0}}}) {
    const char* spec = c.spec;
    SCOPED_TRACE(spec);
    ir::PrimFunc before = ops::OpRegistry::global().make_workload(spec).func;
    schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(spec, c.tiles);
    std::vector<tensor::HostTensor> expected = interp::make_arguments(before, 5, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> actual = expected;
    interp::run(before, expected);
    interp::run(sch.func(), actual);
    EXPECT_TRUE(testing::outputs_match(before, expected, actual));
  }
}

TEST(CudaWgmma, GemmBlocksBecomeWarpgroupCode) {
  CudaSource src = generate_cuda(lowered(kF16), lower::Target::cuda_h200());
  const std::string& code = src.code;
  // The prelude's PTX: one m64n128k16 helper, fenced, committed and waited for.
  EXPECT_EQ(count(code, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, "), 1u);
  EXPECT_EQ(count(code, "%63}, %65, %66, p, 1, 1, 0, 0;"), 1u) << "64 accumulators, then the two descriptors";
  EXPECT_EQ(count(code, "wgmma.fence.sync.aligned;"), 1u);
  EXPECT_EQ(count(code, "wgmma.commit_group.sync.aligned;"), 1u);
  EXPECT_EQ(count(code, "wgmma.wait_group.sync.aligned 0;"), 1u);
  EXPECT_EQ(count(code, "mma.sync"), 0u);
  // The k loop's four wgmma calls are one run: fenced before, waited for after (the
  // accumulators are read and the tiles rewritten only after the wait).
  size_t fence = code.find("dragon_wgmma_fence();\n");
  size_t call = code.find("dragon_wgmma_m64n128k16_f16(C_acc_warp + ");
  size_t wait = code.find("dragon_wgmma_wait_all();\n");
  ASSERT_NE(fence, std::string::npos);
  ASSERT_NE(wait, std::string::npos);
  EXPECT_LT(fence, call);
  EXPECT_LT(call, wait);
  EXPECT_EQ(count(code, "dragon_wgmma_fence();\n"), 1u);
  EXPECT_EQ(count(code, "dragon_wgmma_wait_all();\n"), 1u);
  EXPECT_NE(code.substr(fence, 120).find("for (int32_t r0_1 = 0; r0_1 < 4; ++r0_1)"), std::string::npos)
      << "the fence should open the k loop";
  // One call per tensorized block, under its loops; no scalar reference loop is left.
  for (const char* call : {"dragon_wgmma_fill_m64n8_f32(C_acc_warp + ", "dragon_wgmma_m64n128k16_f16(C_acc_warp + ",
                           "dragon_wgmma_store_m64n8_f32(C_acc + "}) {
    EXPECT_EQ(count(code, call), 1u) << call;
  }
  EXPECT_EQ(count(code, "scalar code"), 0u);
  // A 64x128 accumulator per warpgroup: 64 floats a lane.
  EXPECT_EQ(count(code, "float C_acc_warp[64];"), 1u);
  // The 16-byte copies into shared memory write the 128-byte swizzled layout, into tiles
  // on 1024-byte atoms, and fence the async proxy before the barrier that wgmma waits on.
  EXPECT_NE(code.find("*(int4*)(A_shared_dyn + dragon_swizzle128_b16("), std::string::npos);
  EXPECT_NE(code.find("*(int4*)(B_shared_dyn + dragon_swizzle128_b16("), std::string::npos);
  EXPECT_NE(code.find("extern __shared__ __align__(1024) unsigned char dragon_shared[];"), std::string::npos);
  EXPECT_NE(code.find("fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n"), std::string::npos);
  // 128 lanes in x, the 2 warpgroups in y; 64x128 output tiles of the 128x128 GEMM.
  ASSERT_EQ(src.kernels.size(), 2u);
  EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{128, 2, 1}));
  EXPECT_EQ(src.kernels[0].grid[0] * src.kernels[0].grid[1] * src.kernels[0].grid[2], 1);
  // A 128x64 and a 128x64 tile of halves: 16 KiB each, B's on a 1024-byte boundary.
  EXPECT_EQ(src.kernels[0].dynamic_shared_bytes, 2 * 128 * 64 * 2);
  if (::testing::Test::HasFailure() || getenv("WGMMA_DUMP")) std::printf("%s\n", code.c_str());
}

TEST(CudaWgmma, EveryAccessToAnOperandTileIsSwizzled) {
  // Scalar copies (no vectorize) index the shared tiles through the swizzle too.
  std::string code = generate_cuda(lowered(kBf16, {1, 64}), lower::Target::cuda_h200()).code;
  EXPECT_EQ(count(code, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), 1u);
  for (size_t at = code.find("A_shared_dyn["); at != std::string::npos; at = code.find("A_shared_dyn[", at + 1)) {
    EXPECT_EQ(code.compare(at, 35, "A_shared_dyn[dragon_swizzle128_b16("), 0) << code.substr(at, 60);
  }
  size_t vector_copies = count(code, "A_shared_dyn + dragon_swizzle128_b16(");
  size_t plain = count(code, "A_shared_dyn + ") - count(code, "A_shared_dyn + dragon_swizzle128_b16(");
  EXPECT_GE(vector_copies, 1u);
  // The only unswizzled reference is the wgmma's operand pointer (its descriptor's start).
  EXPECT_EQ(plain, 1u) << code;
}

TEST(CudaWgmma, RefusesOperandRowsThatAreNotOneSwizzleRow) {
  // A padded shared tile (rows of 64 + 8 halves) has no 128-byte swizzled layout.
  schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(kF16);
  schedule::BlockRV a_shared = sch.get_block("A_shared_dyn");
  sch.storage_align(a_shared, 0, -2, 64, 8);
  testing::apply_default_gpu_schedule(sch);
  ir::PrimFunc f = lower::lower(sch.func(), lower::Target::cuda_h200()).func;
  std::string why;
  try {
    generate_cuda(f, lower::Target::cuda_h200());
  } catch (const UserError& e) {
    why = e.what();
  }
  EXPECT_NE(why.find("wgmma_m64n128k16_f16f16f32_trans_b block does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("rows of exactly 64"), std::string::npos) << why;
}

// Replaces the tensor_intrin annotation `from` by `to` on every loop of a flat function.
class RenameIntrin final : public ir::StmtExprMutator {
 public:
  RenameIntrin(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt body = visit(op->body);
    ir::Annotations annotations = op->annotations;
    auto it = annotations.find("tensor_intrin");
    if (it != annotations.end() && std::get<std::string>(it->second) == from_) it->second = to_;
    return ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, annotations);
  }

 private:
  std::string from_, to_;
};

std::string refusal(const ir::PrimFunc& flat) {
  try {
    generate_cuda(flat, lower::Target::cuda_h200());
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CudaWgmma, RefusesAKernelMixingWarpAndWarpgroupBlocks) {
  // A warp's mma.sync fill of an accumulator that a warpgroup's wgmma updates: the two
  // lane layouts (and lane counts) cannot share a kernel.
  ir::PrimFunc f = lowered(kF16);
  f = f.with_body(RenameIntrin("wgmma_fill_m64n8_f32", "mma_fill_m16n8_f32").visit(f->body));
  std::string why = refusal(f);
  EXPECT_NE(why.find("matmul_kernel0 has tensor-core blocks, but it mixes warpgroup (wgmma) blocks and warp "
                     "(mma.sync) blocks"),
            std::string::npos)
      << why;
}

TEST(CudaWgmma, GemmsCompileToSm90aCubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  struct Case {
    const char* spec;
    schedule::testing::WgmmaGemmTiles tiles;
    const char* instruction;
  };
  const std::vector<Case> cases = {
      {kF16, {2, 128}, "m64n128k16.f32.f16.f16"},
      {kBf16, {1, 64}, "m64n64k16.f32.bf16.bf16"},
      {"matmul:m=64,n=256,k=64,trans_b=true,dtype=f16", {1, 256}, "m64n256k16.f32.f16.f16"},
      {"matmul:m=128,n=24,k=64,trans_b=true,dtype=bf16", {2, 24}, "m64n24k16.f32.bf16.bf16"},
      {"matmul:m=128,n=256,k=256,trans_b=true,dtype=f16", {2, 256, 3}, "m64n256k16.f32.f16.f16"}};
  std::vector<ir::PrimFunc> funcs;
  for (const Case& c : cases) funcs.push_back(lowered(c.spec, c.tiles));
  std::vector<Expected<runtime::CudaBuild>> builds =
      runtime::compile_cuda_all(funcs, lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].spec);
    ASSERT_TRUE(builds[i].ok()) << builds[i].error().describe();
    EXPECT_EQ(builds[i].value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
    if (const char* dir = getenv("WGMMA_DUMP")) {
      std::FILE* f = std::fopen((std::string(dir) + "/wgmma" + std::to_string(i) + ".cubin").c_str(), "wb");
      std::fwrite(builds[i].value().cubin.bytes.data(), 1, builds[i].value().cubin.bytes.size(), f);
      std::fclose(f);
      write_text_file(std::string(dir) + "/wgmma" + std::to_string(i) + ".cu", builds[i].value().source.code);
    }
    EXPECT_NE(builds[i].value().source.code.find(std::string("wgmma.mma_async.sync.aligned.") + cases[i].instruction),
              std::string::npos);
  }
}

TEST(CudaWgmma, PipelinedSketchCopiesWithSwizzledCpAsyncAndComputesTheGemm) {
  const char* spec = "matmul:m=128,n=128,k=256,trans_b=true,dtype=f16";
  schedule::testing::WgmmaGemmTiles tiles{2, 128, 3};
  ir::PrimFunc before = ops::OpRegistry::global().make_workload(spec).func;
  schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(spec, tiles, true);
  std::vector<tensor::HostTensor> expected = interp::make_arguments(before, 7, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(before, expected);
  interp::run(sch.func(), actual);
  EXPECT_TRUE(testing::outputs_match(before, expected, actual));
  CudaSource src = generate_cuda(lower::lower(sch.func(), lower::Target::cuda_h200()).func, lower::Target::cuda_h200());
  // Three stages of a 128x64 A tile and a 128x64 B tile, each on 1024-byte atoms.
  EXPECT_EQ(src.kernels[0].dynamic_shared_bytes, 3 * 2 * 128 * 64 * 2);
  EXPECT_NE(src.code.find("dragon_cp_async_16(A_shared_dyn + dragon_swizzle128_b16("), std::string::npos) << src.code;
  EXPECT_NE(src.code.find("dragon_cp_async_16(B_shared_dyn + dragon_swizzle128_b16("), std::string::npos);
  EXPECT_NE(src.code.find("cp.async.wait_group 1;"), std::string::npos);
  if (::testing::Test::HasFailure() || getenv("WGMMA_DUMP")) std::printf("%s\n", src.code.c_str());
}

// ---- The wgmma expert scripts (data/scripts/expert/gpu/) --------------------------------
// Each is the trace of the sketch with its tiles, the output cast bound by AutoBind; this
// test regenerates them (DRAGON_UPDATE_EXPERT_SCRIPTS=1) or checks that they still are.
struct WgmmaExpert {
  const char* file;
  const char* spec;
  schedule::testing::WgmmaGemmTiles tiles;
  const char* small_spec;  // a shape the interpreter checks quickly
};

const WgmmaExpert kExperts[] = {
    {"gemm_f16_wgmma_128x256.script", "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=f16", {2, 256, 0},
     "matmul:m=128,n=256,k=128,trans_b=true,dtype=f16"},
    {"gemm_f16_wgmma_pipe3_128x256.script", "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=f16", {2, 256, 3},
     "matmul:m=128,n=256,k=256,trans_b=true,dtype=f16"},
    {"gemm_f16_wgmma_pipe3_128x128.script", "matmul:m=1024,n=1024,k=1024,trans_b=true,dtype=f16", {2, 128, 3},
     "matmul:m=256,n=128,k=192,trans_b=true,dtype=f16"},
    {"gemm_bf16_wgmma_pipe3_128x256.script", "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=bf16", {2, 256, 3},
     "matmul:m=128,n=256,k=256,trans_b=true,dtype=bf16"},
};

TEST(WgmmaExpertScripts, AreTheSketchsTracesAndComputeTheGemm) {
  const std::string dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/";
  const bool update = getenv("DRAGON_UPDATE_EXPERT_SCRIPTS") != nullptr;
  for (const WgmmaExpert& e : kExperts) {
    SCOPED_TRACE(e.file);
    std::string text = script::encode(schedule::testing::wgmma_gemm_sketch(e.spec, e.tiles, true).trace());
    if (update) write_text_file(dir + e.file, text);
    std::string committed = read_text_file(dir + e.file);
    EXPECT_EQ(committed, text) << "regenerate with DRAGON_UPDATE_EXPERT_SCRIPTS=1 " << "test_cuda_wgmma";
    EXPECT_TRUE(script::is_canonical(committed));
    // Replayed at a small shape, the script computes what the unscheduled GEMM does.
    ir::PrimFunc before = ops::OpRegistry::global().make_workload(e.small_spec).func;
    schedule::Schedule sch(before);
    script::decode(committed).apply_to(sch);
    std::vector<tensor::HostTensor> expected = interp::make_arguments(before, 9, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> actual = expected;
    interp::run(before, expected);
    interp::run(sch.func(), actual);
    EXPECT_TRUE(testing::outputs_match(before, expected, actual));
  }
}

}  // namespace
}  // namespace dragon::codegen
