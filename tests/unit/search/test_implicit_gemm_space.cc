// The tensor-core rule on convolutions (space/implicit_gemm.cc, then
// multi_level_tiling_tensor_core.cc): conv2d in f16, bf16 and f32 gets a tensor-core
// sketch (mma.sync m16n8k16, or m16n8k8 tf32) whose block is the fused m x n x k GEMM and
// whose operand copies are inlined into the shared-memory reads (no im2col buffer), and,
// with a kernel wider than 1, first a sketch whose k runs over the kernel's taps outside
// the channels, its weights copied into B'[n, k] by a kernel of their own; their
// candidates tensorize every annotated block and compute the convolution on the
// interpreter; a pipelined conv's output tile takes the memory of an operand tile
// (share_shared_memory); tile mutations replay; on sm_90 the wgmma rule's candidates
// compute the conv too. A matmul whose A is stored [k, m] goes the same way. GEMMs and
// convs of partial tiles are padded to whole ones (pad_einsum), unless that more than
// doubles the work; a block that is not one GEMM (a grouped conv) gets none. The ResNet-50 expert script is
// the rule's candidate. f32 convs sample one-pass TF32 and 3xTF32, f32 GEMMs only the
// latter. NVRTC compiles are test_search_nvrtc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/mutator.h"
#include "dragon/search/postproc.h"
#include "dragon/support/file.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/lower/gpu/async_copy_model.h"
#include "unit/lower/gpu/barrier_simulator.h"
#include "unit/lower/gpu/gpu_test_util.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

using schedule::testing::has_line;
using schedule::testing::workload;
using testing::kH200;

// The tensor-core sketches of `spec` under the built-in CUDA set.
std::vector<Sketch> builtin_tensor_core_sketches(const std::string& spec) {
  return testing::tensor_core_sketches_of(workload(spec), RuleSet::cuda());
}

// How many blocks the candidate's script tensorizes (its "tz" lines).
size_t tensorized_blocks(const std::string& script) {
  size_t count = 0;
  for (size_t at = script.find("\ntz "); at != std::string::npos; at = script.find("\ntz ", at + 1)) ++count;
  return count;
}

// Whether `candidate` gives `func`'s outputs on the interpreter, both run on the inputs
// drawn from `seed`.
bool computes_like(const ir::PrimFunc& func, const ir::PrimFunc& candidate, uint64_t seed) {
  std::vector<tensor::HostTensor> expected = interp::make_arguments(func, seed, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(func, expected);
  interp::run(candidate, actual);
  return codegen::testing::outputs_match(func, expected, actual);
}

// ResNet-50-like 3x3 layers, scaled down for the interpreter: m = 2 * 8 * 8 = 128,
// n = 16, k = 16 * 9 = 144 (a multiple of 16 and of 8).
constexpr const char* kConvs[] = {
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=f16",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=bf16",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=f32",
    // Strided (m = 2 * 4 * 4 = 32) and dilated.
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,stride=2x2,padding=1x1,dtype=f16",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,dilation=2x2,padding=2x2,dtype=f16",
    // 1D, 3D, pointwise and transposed (the flipped weight read through the reindexing).
    "conv1d:batch=2,in_channels=16,out_channels=16,size=16,kernel=3,padding=1,dtype=f16",
    "conv3d:batch=1,in_channels=16,out_channels=8,size=4x4x4,kernel=3x3x3,padding=1x1x1,dtype=f16",
    "conv2d:batch=2,in_channels=32,out_channels=16,size=8x8,kernel=1x1,dtype=f16",
    "conv_transpose2d:batch=1,in_channels=16,out_channels=16,size=4x4,kernel=3x3,stride=2x2,padding=1x1,"
    "output_padding=1x1,dtype=f16",
    // A matmul whose A is stored [k, m]: reindexed to [m, k] as the shared tiles load it.
    "matmul:m=64,n=64,k=64,dtype=f16,trans_a=true",
    // Taps along one axis only, a strided and dilated transposed 1D conv with output padding,
    // and a dilated f32 conv3d: the taps-outer order on kernels of every shape.
    "conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=1x3,padding=0x1,dtype=f32",
    "conv_transpose1d:batch=2,in_channels=16,out_channels=16,size=12,kernel=3,stride=2,padding=1,output_padding=1,"
    "dilation=2,dtype=f32",
    "conv3d:batch=1,in_channels=8,out_channels=16,size=6x6x6,kernel=3x3x3,dilation=2x2x2,padding=2x2x2,dtype=f32",
};

// Whether a convolution of kConvs has a kernel wider than 1 (taps to put outermost in k).
bool has_taps(const std::string& spec) {
  return spec.find("kernel=") != std::string::npos && spec.find("kernel=1x1") == std::string::npos;
}

TEST(ImplicitGemmTensorCore, ConvsGetATensorCoreSketchOfTheFusedGemm) {
  for (const char* spec : kConvs) {
    SCOPED_TRACE(spec);
    std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
    // With taps, two: k with the taps outermost first, then k as declared.
    ASSERT_EQ(s.size(), has_taps(spec) ? 2u : 1u);
    for (size_t n = 0; n < s.size(); ++n) {
      const bool taps_outer = s.size() == 2 && n == 0;
      SCOPED_TRACE(taps_outer ? "taps outer" : "as declared");
      const std::string text = script::encode(s[n].trace);
      // Every operand reindexed, the copies and the block laid out, the input copy inlined.
      EXPECT_NE(text.find("ri b"), std::string::npos) << text;
      EXPECT_NE(text.find("tbl b"), std::string::npos) << text;
      EXPECT_NE(text.find("ci b"), std::string::npos) << text;
      const bool f32 = std::string(spec).find("f32") != std::string::npos;
      EXPECT_NE(text.find(f32 ? "mma_m16n8k8_tf32tf32f32_trans_b" : "_trans_b"), std::string::npos) << text;
      // No im2col buffer: the shared tiles gather from the padded input. Nor a C'[m, n] in
      // global memory: the accumulators go through a shared tile into C (the copy back
      // folded into its write: "rci"), unless C' is padded past C (m not a multiple of 16:
      // "pe", the copy back then reads the valid region). Taps outer, the weights are copied
      // into B'[n, k] once, kept there against auto_inline.
      const std::string ir_text = ir::print_function(schedule::replay(s[n].trace, workload(spec)).func());
      EXPECT_EQ(ir_text.find("X_reindex: "), std::string::npos) << ir_text;
      EXPECT_EQ(ir_text.find("W_reindex: ") != std::string::npos, taps_outer) << ir_text;
      EXPECT_EQ(text.find("dragon.keep_materialized") != std::string::npos, taps_outer) << text;
      EXPECT_EQ(text.find("\nrci b") != std::string::npos, text.find("\npe b") == std::string::npos) << text;
    }
  }
}

TEST(ImplicitGemmTensorCore, CandidatesTensorizeAndComputeTheConv) {
  for (const char* spec : kConvs) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
    ASSERT_EQ(s.size(), has_taps(spec) ? 2u : 1u);
    for (int seed = 0; seed < 2 * static_cast<int>(s.size()); ++seed) {
      CandidateResult r = sample_candidate(s[static_cast<size_t>(seed) % s.size()], func, kH200, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
      const SpaceCandidate& c = r.candidate();
      const std::string text = script::encode(c.trace);
      // rewrite_tensorize tensorized every annotated block: the update, the init, both
      // fragment loads and the store.
      EXPECT_NE(text.find("mma_fill_m16n8_f32"), std::string::npos) << text;
      EXPECT_NE(text.find("mma_store_m16n8_f32"), std::string::npos) << text;
      EXPECT_EQ(tensorized_blocks(text), 5u) << text;
      EXPECT_TRUE(computes_like(func, c.func, 7)) << text;
    }
  }
}

// Convolutions with and without padding (the padded input's zeros, k = 27 padded to 32),
// pipelined two and three k steps deep: the kernel issues its gathered tiles as cp.async,
// zero-filled where the padding is, and keeps the conv's result with the copies landing
// only at their waits and threads interleaving only at barriers (which also checks the
// barrier between the warps' stores of the output tile and the block's copy of it into Y).
TEST(ImplicitGemmTensorCore, PipelinedConvsGatherTheirTilesWithZeroFilledAsyncCopies) {
  for (const testing::PipelinedConv& c : testing::pipelined_convs()) {
    for (auto [depth, taps_outer] : {std::pair<int64_t, bool>{2, false}, {2, true}, {3, false}, {3, true}}) {
      SCOPED_TRACE(std::string(c.spec) + " depth " + std::to_string(depth) + (taps_outer ? " taps outer" : ""));
      ir::PrimFunc func = workload(c.spec);
      CandidateResult r = testing::pipelined_conv_candidate(c, func, depth, false, taps_outer);
      ASSERT_TRUE(r.ok()) << r.failure().message;
      const ir::PrimFunc kernel = lower::lower(r.candidate().func, kH200).func;
      const std::string code = codegen::generate_cuda(kernel, kH200).code;
      EXPECT_NE(code.find("cp.async.wait_group " + std::to_string(depth - 2)), std::string::npos) << code;
      const bool gathers_async = code.find("dragon_cp_async_4(X") != std::string::npos ||
                                 code.find("dragon_cp_async_4_zfill(X") != std::string::npos;
      EXPECT_TRUE(gathers_async) << code;
      EXPECT_EQ(code.find("dragon_cp_async_4_zfill(X") != std::string::npos, c.padded) << code;
      EXPECT_TRUE(lower::testing::close_outputs(
          func, lower::testing::serialize_between_barriers(lower::testing::delay_async_copies(kernel))))
          << script::encode(r.candidate().trace);
    }
  }
}

// The bytes of the shared buffers `func` allocates, each in its own memory.
int64_t shared_buffer_bytes(const ir::PrimFunc& func) {
  struct Sum : ir::StmtVisitor {
    int64_t bytes = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::AllocateNode* op) override {
      if (op->buffer->scope == "shared" || op->buffer->scope == "shared.dyn") {
        bytes += op->buffer->num_elements() * op->buffer->dtype.bytes();
      }
      ir::StmtVisitor::visit_(op);
    }
  } sum;
  sum.visit(func->body);
  return sum.bytes;
}

// share_shared_memory on the pipelined conv kernels: the operand tiles, used only in the
// k loop, and the output tile Y_reindex_shared_dyn, used only after it, take turns in one
// piece of shared memory. The kernel asks for less than the sum of its buffers and still
// computes the conv with copies landing at their waits and threads interleaved only at
// barriers. (The barrier before the tile's first write is needed on the GPU, but the
// model cannot show it here: it ends a phase at the end of the k loop, whose steps hold
// barriers, anyway; test_share_shared_memory.cc shows the model catching it.)
TEST(ImplicitGemmTensorCore, TheOutputTileTakesTheMemoryOfAnOperandTile) {
  for (const testing::PipelinedConv& c : testing::pipelined_convs()) {
    for (auto [depth, taps_outer] : {std::pair<int64_t, bool>{2, false}, {2, true}, {3, false}, {3, true}}) {
      SCOPED_TRACE(std::string(c.spec) + " depth " + std::to_string(depth) + (taps_outer ? " taps outer" : ""));
      ir::PrimFunc func = workload(c.spec);
      CandidateResult r = testing::pipelined_conv_candidate(c, func, depth, false, taps_outer);
      ASSERT_TRUE(r.ok()) << r.failure().message;
      int64_t separate_bytes = 0;
      lower::LowerOptions options;
      options.after_pass = [&](const std::string& pass, const ir::PrimFunc& after, bool) {
        if (pass == "plan_gpu_allocations") separate_bytes = shared_buffer_bytes(after);
      };
      const ir::PrimFunc kernel = lower::lower(r.candidate().func, kH200, options).func;
      const codegen::CudaSource source = codegen::generate_cuda(kernel, kH200);
      // Taps outer, the weights' copy runs first, a kernel of its own.
      ASSERT_EQ(source.kernels.size(), taps_outer ? 2u : 1u);
      EXPECT_GT(separate_bytes, 0);
      EXPECT_LT(source.kernels.back().dynamic_shared_bytes, separate_bytes) << source.code;
      EXPECT_LT(shared_buffer_bytes(kernel), separate_bytes);
      EXPECT_NE(source.code.find("_then_Y_reindex_shared_dyn = "), std::string::npos) << source.code;
      EXPECT_NE(source.code.find("cp.async.wait_group 0;"), std::string::npos) << source.code;
      EXPECT_TRUE(lower::testing::close_outputs(
          func, lower::testing::serialize_between_barriers(lower::testing::delay_async_copies(kernel))))
          << script::encode(r.candidate().trace);
    }
  }
}

// The decision sampler counts the staged output tile as lowering allocates it: in the
// memory of the largest operand tile (share_shared_memory), adding only what it exceeds
// that one by. Under a tight shared limit, some of its draws hold buffers whose sum is past
// the limit, and every kernel it makes fits (sample_candidate verifies the lowered code).
TEST(ImplicitGemmTensorCore, TheSamplerCountsTheOutputTileInTheOperandsMemory) {
  const std::string spec = "conv2d:batch=2,in_channels=32,out_channels=64,size=18x18,kernel=3x3,dtype=f32";
  lower::Target tight = kH200;
  tight.max_shared_memory_per_block = 24 * 1024;
  ir::PrimFunc func = workload(spec);
  std::vector<Sketch> s = testing::tensor_core_sketches_of(func, RuleSet::cuda());
  ASSERT_EQ(s.size(), 2u);
  int past_the_limit_summed = 0, ok = 0;
  for (int seed = 1; seed <= 24; ++seed) {
    CandidateResult r = sample_candidate(s[static_cast<size_t>(seed) % 2], func, tight, RuleSet::cuda(), seed);
    if (!r.ok()) continue;
    ++ok;
    int64_t separate_bytes = 0;
    lower::LowerOptions options;
    options.after_pass = [&](const std::string& pass, const ir::PrimFunc& after, bool) {
      if (pass == "plan_gpu_allocations") separate_bytes = shared_buffer_bytes(after);
    };
    const ir::PrimFunc kernel = lower::lower(r.candidate().func, tight, options).func;
    EXPECT_LE(shared_buffer_bytes(kernel), tight.max_shared_memory_per_block);
    if (separate_bytes > tight.max_shared_memory_per_block) ++past_the_limit_summed;
  }
  EXPECT_GE(ok, 20);
  EXPECT_GE(past_the_limit_summed, 1);
}

TEST(ImplicitGemmTensorCore, F32ConvsSampleOnePassTf32AndF32GemmsDoNot) {
  // cuda.json: f32_implicit_gemm_intrins ["tf32", "3xtf32"] (eager's convolutions run in
  // TF32, so the harness's calibrated tolerance may admit it), f32_intrins ["3xtf32"].
  auto variants_of = [](const std::string& spec) {
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
    EXPECT_EQ(s.size(), spec.starts_with("conv") ? 2u : 1u) << spec;
    std::set<std::string> seen;
    for (int seed = 0; seed < 24 && !s.empty(); ++seed) {
      CandidateResult r = sample_candidate(s[static_cast<size_t>(seed) % s.size()], func, kH200, RuleSet::cuda(), seed);
      EXPECT_TRUE(r.ok()) << spec << " seed " << seed;
      if (!r.ok()) continue;
      codegen::CudaSource src = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
      for (const char* helper : {"dragon_tf32_mma_m16n8k8_prerounded(", "dragon_tf32_mma_m16n8k8_3x_presplit("}) {
        if (src.code.find(helper, src.prelude_size) != std::string::npos) seen.insert(helper);
      }
    }
    return seen;
  };
  EXPECT_EQ(variants_of("conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=f32"),
            (std::set<std::string>{"dragon_tf32_mma_m16n8k8_prerounded(", "dragon_tf32_mma_m16n8k8_3x_presplit("}));
  EXPECT_EQ(variants_of("matmul:m=128,n=128,k=64"), (std::set<std::string>{"dragon_tf32_mma_m16n8k8_3x_presplit("}));
  // A misspelt variant names the parameter it was given in.
  try {
    RuleSet::parse(R"({"extends": "cuda", "set": [{"rule": "multi_level_tiling_tensor_core",
                      "params": {"f32_implicit_gemm_intrins": ["tf32", "4xtf32"]}}]})",
                   "bad.json");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("f32_implicit_gemm_intrins entry '4xtf32'"), std::string::npos) << e.what();
  }
}

// GEMMs that are not whole mma tiles, padded to them (pad_to_tiles: pad_einsum after the
// presentation, or after reindexing a plain GEMM's operands): i, j, k of 100 x 60 x 27
// become 112 x 64 x 32; a conv with 3 input channels has k = 27; a conv over 7 x 7 has
// m = 98.
constexpr const char* kUnevenGemms[] = {
    "matmul:m=100,n=60,k=27,dtype=f16",
    "matmul:m=100,n=60,k=27",  // f32: the tf32 k is 8
    "matmul:m=40,n=20,k=24,dtype=bf16,trans_b=true",
    "batch_matmul:batch=2,m=30,n=14,k=40,dtype=f16",
    "conv2d:batch=2,in_channels=3,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=f16",
    "conv2d:batch=2,in_channels=3,out_channels=12,size=8x8,kernel=3x3,padding=1x1",
    "conv2d:batch=2,in_channels=8,out_channels=16,size=8x8,kernel=3x3,padding=1x1,dtype=f16",
    "conv2d:batch=2,in_channels=16,out_channels=16,size=7x7,kernel=3x3,padding=1x1,dtype=f16",
};

TEST(ImplicitGemmTensorCore, GemmsOfPartialTilesArePaddedToWholeOnes) {
  for (const char* spec : kUnevenGemms) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
    ASSERT_EQ(s.size(), has_taps(spec) ? 2u : 1u);
    for (const Sketch& sketch : s) {
      const std::string text = script::encode(sketch.trace);
      EXPECT_NE(text.find("\npe b"), std::string::npos) << text;
      // The operand copies, zero in the padding, are inlined into the shared reads (the
      // input's at least: taps outer, the weights' is kept).
      EXPECT_NE(text.find("\nci b"), std::string::npos) << text;
    }
    for (int seed = 0; seed < 2 * static_cast<int>(s.size()); ++seed) {
      CandidateResult r = sample_candidate(s[static_cast<size_t>(seed) % s.size()], func, kH200, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
      const SpaceCandidate& c = r.candidate();
      const std::string candidate = script::encode(c.trace);
      EXPECT_EQ(tensorized_blocks(candidate), 5u) << candidate;
      // The tensorized candidate computes the unpadded function on the interpreter.
      EXPECT_TRUE(computes_like(func, c.func, 7)) << candidate;
    }
  }
}

// More than twice the work padded (kMaxPaddedWork): k = 3 to 16, m = 2 to 16.
TEST(ImplicitGemmTensorCore, PaddingsOfMoreThanTwiceTheWorkAreRefused) {
  for (const char* spec : {"matmul:m=100,n=64,k=3,dtype=f16", "matmul:m=2,n=64,k=64,dtype=f16",
                           "conv2d:batch=2,in_channels=1,out_channels=16,size=8x8,kernel=1x1,dtype=f16"}) {
    EXPECT_TRUE(builtin_tensor_core_sketches(spec).empty()) << spec;
  }
}

TEST(ImplicitGemmTensorCore, OtherConvsGetNone) {
  // A grouped conv (each group its own GEMM). Partial tiles are padded (above).
  for (const char* spec : {"conv2d:batch=2,in_channels=16,out_channels=16,size=8x8,kernel=3x3,padding=1x1,groups=2,"
                           "dtype=f16"}) {
    EXPECT_TRUE(builtin_tensor_core_sketches(spec).empty()) << spec;
  }
}

// On sm_90 the wgmma rule presents the conv too (its B becomes [n, k], what wgmma reads):
// m = 2 * 8 * 8 = 128, n = 128, k = 64 * 9 = 576 (multiples of 64). Each candidate runs on
// the interpreter thread by thread between barriers (minutes on CI's two cores), so each
// dtype gets one seed of its own rather than both.
TEST(ImplicitGemmTensorCore, WgmmaCandidatesComputeTheConv) {
  struct Case {
    const char* spec;
    int seed;
  };
  for (const Case& c : {Case{"conv2d:batch=2,in_channels=64,out_channels=128,size=8x8,kernel=3x3,padding=1x1,dtype=f16", 0},
                        Case{"conv2d:batch=2,in_channels=64,out_channels=128,size=8x8,kernel=3x3,padding=1x1,dtype=bf16", 1}}) {
    const char* spec = c.spec;
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> wgmma = testing::sketches_of_rule(func, RuleSet::cuda(), "multi_level_tiling_wgmma");
    ASSERT_EQ(wgmma.size(), 1u);
    {
      const int seed = c.seed;
      CandidateResult r = sample_candidate(wgmma[0], func, kH200, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
      const std::string text = script::encode(r.candidate().trace);
      EXPECT_NE(text.find("ri b"), std::string::npos) << text;
      EXPECT_NE(text.find("wgmma"), std::string::npos) << text;
      EXPECT_TRUE(computes_like(func, r.candidate().func, 3)) << text;
      // The output staged through shared memory into Y (the copy back folded in), and the
      // kernel right with threads interleaving only at barriers.
      EXPECT_NE(text.find("\nrci b"), std::string::npos) << text;
      const ir::PrimFunc kernel = lower::lower(r.candidate().func, kH200).func;
      EXPECT_EQ(ir::print_function(kernel).find("_reindex: "), std::string::npos);
      // The operand tiles wgmma reads are swizzled from a 1024-byte aligned start: they keep
      // their own memory, and the output tile has nothing else to share (share_shared_memory).
      EXPECT_EQ(ir::print_function(kernel).find("_then_"), std::string::npos);
      EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(kernel))) << text;
    }
  }
}

// The wgmma rule pads to its own tiles (i to 64, j to the smallest N tile, 128, k to 64):
// a matmul of 120 x 250 x 120 (B stored [k, n], reindexed [n, k] as wgmma reads it) and a
// conv with k = 60 * 9 = 540.
TEST(ImplicitGemmTensorCore, WgmmaPadsPartialTiles) {
  for (const char* spec : {"matmul:m=120,n=250,k=120,dtype=f16",
                           "conv2d:batch=2,in_channels=60,out_channels=128,size=8x8,kernel=3x3,padding=1x1,dtype=bf16"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> wgmma = testing::sketches_of_rule(func, RuleSet::cuda(), "multi_level_tiling_wgmma");
    ASSERT_EQ(wgmma.size(), 1u);
    CandidateResult r = sample_candidate(wgmma[0], func, kH200, RuleSet::cuda(), 0);
    ASSERT_TRUE(r.ok()) << r.failure().message;
    const std::string text = script::encode(r.candidate().trace);
    EXPECT_NE(text.find("\npe b"), std::string::npos) << text;
    EXPECT_NE(text.find("wgmma"), std::string::npos) << text;
    EXPECT_TRUE(computes_like(func, r.candidate().func, 3)) << text;
  }
}

// A plain GEMM's epilogue (a bias and an activation, or the cast of its f32 accumulator to
// f16) is computed on the mma.sync sketch's staged output tile's way to global memory: the
// f32 intermediate and the epilogue's own kernel are gone, the tile is staged through shared
// memory (barrier-checked) and written in sampled vectors, and every candidate computes the
// op. (The wgmma rule keeps the
// epilogue a kernel of its own: multi_level_tiling_wgmma.cc says why.)
TEST(ImplicitGemmTensorCore, APlainGemmsEpilogueRunsOnTheStagedOutputTile) {
  struct Case {
    const char* spec;
    const char* rule;
    const char* intermediate;  // the GEMM's f32 output, an allocation before
  };
  for (const Case& c : {Case{"matmul_bias_act:m=32,n=16,k=32,activation=relu,dtype=bf16", "multi_level_tiling_tensor_core",
                             "matmul: f32"},
                        Case{"matmul:m=32,n=16,k=32,dtype=f16", "multi_level_tiling_tensor_core", "C_acc: f32"},
                        Case{"matmul_bias_act:m=32,n=16,k=32,activation=gelu,trans_w=true,dtype=f16",
                             "multi_level_tiling_tensor_core", "matmul: f32"}}) {
    SCOPED_TRACE(c.spec);
    ir::PrimFunc func = workload(c.spec);
    ASSERT_NE(ir::print_function(func).find(c.intermediate), std::string::npos);
    std::vector<Sketch> sketches = testing::sketches_of_rule(func, RuleSet::cuda(), c.rule);
    ASSERT_EQ(sketches.size(), 1u);
    for (int seed = 0; seed < 4; ++seed) {  // vector stores of 1, 2 and 4 lanes among them
      CandidateResult r = sample_candidate(sketches[0], func, kH200, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
      const std::string text = script::encode(r.candidate().trace);
      EXPECT_NE(text.find("\nrci b"), std::string::npos) << text;
      const ir::PrimFunc kernel = lower::lower(r.candidate().func, kH200).func;
      const std::string kernel_text = ir::print_function(kernel);
      EXPECT_EQ(kernel_text.find(c.intermediate), std::string::npos) << kernel_text;
      EXPECT_TRUE(computes_like(func, r.candidate().func, 3)) << text;
      EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(kernel))) << text;
    }
  }
}

// No epilogue is folded where the GEMM's consumer is not one elementwise block at the
// GEMM's own indices (an output read by two blocks, or written transposed): the
// tensor-core sketch then keeps its output unstaged, in global memory.
TEST(ImplicitGemmTensorCore, OnlyOneElementwiseConsumerAtTheGemmsIndicesIsAnEpilogue) {
  // An f16 GEMM accumulating in f32 (acc, 32 x 16), then the consumers each case names.
  const std::string gemm = R"(
  block root {
    alloc acc: f32[32, 16]
    for i0 in 32 {
      for i1 in 16 {
        for r0 in 32 {
          block acc [vi0: S 32 = i0, vi1: S 16 = i1, vr0: R 32 = r0] {
            reads A[vi0, vr0], B[vr0, vi1]
            writes acc[vi0, vi1]
            init {
              acc[vi0, vi1] = 0f32
            }
            acc[vi0, vi1] = acc[vi0, vi1] + f32(A[vi0, vr0]) * f32(B[vr0, vi1])
          }
        }
      }
    }
)";
  // A block `name` writing `write` = `value` over acc's 32 x 16.
  auto consumer = [](const std::string& name, const std::string& write, const std::string& value) {
    return "    for i0 in 32 {\n      for i1 in 16 {\n        block " + name +
           " [vi0: S 32 = i0, vi1: S 16 = i1] {\n          reads acc[vi0, vi1]\n          writes " + write +
           "\n          " + write + " = " + value + "\n        }\n      }\n    }\n";
  };
  const std::string two_readers =
      "func two_readers(in A: f16[32, 32], in B: f16[32, 16], out C: f16[32, 16], out D: f16[32, 16]) {" + gemm +
      consumer("C", "C[vi0, vi1]", "f16(acc[vi0, vi1])") + consumer("D", "D[vi0, vi1]", "f16(acc[vi0, vi1] * 2f32)") +
      "  }\n}\n";
  const std::string transposed = "func transposed(in A: f16[32, 32], in B: f16[32, 16], out C: f16[16, 32]) {" + gemm +
                                 consumer("C", "C[vi1, vi0]", "f16(acc[vi0, vi1])") + "  }\n}\n";
  for (const std::string& text : {two_readers, transposed}) {
    const ir::PrimFunc func = ir::parse_function(text);
    std::vector<Sketch> sketches = testing::sketches_of_rule(func, RuleSet::cuda(), "multi_level_tiling_tensor_core");
    ASSERT_EQ(sketches.size(), 1u) << text;
    const std::string script = script::encode(sketches[0].trace);
    EXPECT_EQ(script.find("\nrci b"), std::string::npos) << script;
    CandidateResult r = sample_candidate(sketches[0], func, kH200, RuleSet::cuda(), 0);
    ASSERT_TRUE(r.ok()) << r.failure().message;
    EXPECT_TRUE(computes_like(func, r.candidate().func, 3)) << script;
  }
}

// Evolutionary search's tile mutation redraws a conv candidate's tiles; the replayed
// candidates stay valid (the decision sampler reads the fused, and padded, nest) and
// compute the conv.
// Mutates the tiles of a candidate of `sketch` eight times: each replays, some change it,
// and each computes `func`.
void mutated_tiles_replay_and_compute(const Sketch& sketch, const ir::PrimFunc& func) {
  CandidateResult first = sample_candidate(sketch, func, kH200, RuleSet::cuda(), 1);
  ASSERT_TRUE(first.ok()) << first.failure().message;
  std::unique_ptr<Mutator> mutate = make_mutate_tile_size();
  schedule::RandomEngine rng(5);
  int changed = 0;
  for (int round = 0; round < 8; ++round) {
    std::optional<schedule::Trace> t = mutate->apply(first.candidate().trace, func, rng);
    ASSERT_TRUE(t.has_value());
    CandidateResult r = replay_candidate(*t, func, kH200, RuleSet::cuda());
    ASSERT_TRUE(r.ok()) << r.failure().message;
    changed += script::encode(r.candidate().trace) != script::encode(first.candidate().trace) ? 1 : 0;
    EXPECT_TRUE(computes_like(func, r.candidate().func, 7));
  }
  EXPECT_GT(changed, 0);
}

TEST(ImplicitGemmTensorCore, MutatedTilesReplayAndComputeTheConv) {
  // A conv of whole tiles, and one padded to them (k = 27 to 32).
  for (const std::string spec : {std::string(kConvs[0]), std::string(kUnevenGemms[4])}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
    ASSERT_EQ(s.size(), 2u);
    for (const Sketch& sketch : s) mutated_tiles_replay_and_compute(sketch, func);
  }
}

// The rule's candidate for ResNet-50's 3x3 layer of its third stage in f16 (batch 8, 256
// -> 256 channels, 14x14: m = 1568, n = 256, k = 2304) at the expert script's decisions:
// blocks of 32 x 64 (i tiles 49 1 2 1 1, j tiles 4 1 2 2 2: 2 x 2 warps of 16 x 32, 196
// blocks for the H200's 132 SMs), k steps of 64 (36 4 1 tiles of 16), 16-byte cooperative
// copies, unroll 512.
SpaceCandidate resnet_expert_candidate() {
  const std::string spec =
      "conv2d:batch=8,in_channels=256,out_channels=256,size=14x14,kernel=3x3,padding=1x1,dtype=f16";
  std::vector<Sketch> s = builtin_tensor_core_sketches(spec);
  EXPECT_EQ(s.size(), 2u);
  size_t tiles_set = 0;
  CandidateResult r = testing::candidate_at_decisions(
      s.at(s.size() - 1), workload(spec), RuleSet::cuda(), {{49, 1, 2, 1, 1}, {4, 1, 2, 2, 2}, {36, 4, 1}},
      [](SamplingRole role) -> std::optional<int64_t> {
        if (role == SamplingRole::kVectorLength) return 8;
        if (role == SamplingRole::kUnroll) return 512;
        return std::nullopt;
      },
      &tiles_set);
  EXPECT_EQ(tiles_set, 3u);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.failure().message);
  return r.candidate();
}

// data/scripts/expert/gpu/conv2d_f16_resnet50_3x3.script (timed against torch's conv by
// bench/gpu_expert_bench.cc) is this rule's candidate: search can find what it times.
TEST(ImplicitGemmTensorCore, TheResNetExpertScriptIsTheRulesCandidate) {
  const std::string file = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/conv2d_f16_resnet50_3x3.script";
  const std::string text = script::encode(resnet_expert_candidate().trace);
  EXPECT_EQ(text, read_text_file(file)) << file;
}

}  // namespace
}  // namespace dragon::search
