// tensorize: f16 and bf16 matmuls, and f32 ones with the tf32 family (B as [k, n] and
// [n, k]) with every mma intrinsic
// matched after split/reorder/cache/decompose, bit-exact on the interpreter, replayed and
// round-tripped through JSON; and each precondition with its precise reason.
#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/ir/functor.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

// Splits the last two loops of block `name` into (rows, cols) tiles, moves the tile loops
// innermost and returns the tile's first loop.
LoopRV tile_last_two(Schedule& sch, const std::string& name, int64_t rows, int64_t cols) {
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  const size_t n = loops.size();
  std::vector<LoopRV> r = sch.split(loops[n - 2], {None{}, rows});
  std::vector<LoopRV> c = sch.split(loops[n - 1], {None{}, cols});
  sch.reorder({r[0], c[0], r[1], c[1]});
  return r[1];
}

// The matmul's accumulation C_acc prepared for mma.m16n8k16: operands in "shared" then
// "warp" (when `fragments`), the accumulator in "warp", loops tiled (16, tile_n, 16)
// innermost; the reduction decomposed when `decompose`.
struct Prepared {
  Schedule sch;
  std::vector<LoopRV> update_loops;  // i0, j0, k0, i1, j1, k1
  std::optional<BlockRV> init;
};

Prepared prepare(const std::string& spec, bool fragments = true, int64_t tile_n = 8, bool decompose = true,
                 int64_t tile_k = 16, const std::string& block = "C_acc") {
  Prepared p{Schedule(workload(spec)), {}, std::nullopt};
  Schedule& sch = p.sch;
  BlockRV c = sch.get_block(block);
  if (fragments) {
    for (int64_t index : {0, 1}) {
      sch.cache_read(c, index, "shared");
      sch.cache_read(c, index, "warp");
    }
    sch.cache_write(c, 0, "warp");
  }
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{16}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, tile_n});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, tile_k});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  p.update_loops = {i[0], j[0], k[0], i[1], j[1], k[1]};
  if (decompose) p.init = sch.decompose_reduction(c, k[0]);
  return p;
}

// The tensor_intrin annotation of the block named `name` ("" when absent).
std::string annotation_of(const Schedule& sch, const std::string& name) {
  struct Finder : ir::StmtVisitor {
    std::string name;
    const ir::BlockNode* found = nullptr;
    void visit_(const ir::BlockNode* op) override {
      if (op->name == name) found = op;
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.name = name;
  finder.visit(sch.func()->body);
  if (finder.found == nullptr) {
    ADD_FAILURE() << "no block " << name;
    return "";
  }
  auto it = finder.found->annotations.find(kTensorIntrinAnnotation);
  return it == finder.found->annotations.end() ? "" : std::get<std::string>(it->second);
}

TEST(Tensorize, MmaUpdateMarksTheOuterBlockOnly) {
  Prepared p = prepare("matmul:m=32,n=16,k=32,dtype=f16");
  Schedule& sch = p.sch;
  const ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  sch.tensorize(p.update_loops[3], "mma_m16n8k16_f16f16f32");
  EXPECT_EQ(sch.trace().size(), trace_size + 1);
  EXPECT_EQ(to_string(sch.trace().instructions().back()), fmt::format("Tensorize({} | \"mma_m16n8k16_f16f16f32\" true)",
                                                                       rv_name(p.update_loops[3])));
  EXPECT_EQ(annotation_of(sch, "C_acc_o"), "mma_m16n8k16_f16f16f32");
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block C_acc_o [vi0_o: S 2 = i0_0, vi1_o: S 2 = i1_0, vr0_o: R 2 = r0_0] "
                             "@{tensor_intrin = \"mma_m16n8k16_f16f16f32\"} {"))
      << text;
  // The body is untouched: the inner block still computes the tile.
  EXPECT_TRUE(has_line(text, "C_acc_warp[vi0, vi1] = C_acc_warp[vi0, vi1] + f32(A_shared_warp[vi0, vr0]) * "
                             "f32(B_shared_warp[vr0, vi1])"))
      << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(same_outputs(before, sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// Every intrinsic of the family on one matmul: fragment loads, fill, mma, store.
void tensorize_whole_matmul(const std::string& dtype, bool trans_b) {
  SCOPED_TRACE(dtype + (trans_b ? " trans_b" : ""));
  const std::string spec = fmt::format("matmul:m=32,n=32,k=32,dtype={},trans_b={}", dtype, trans_b);
  Prepared p = prepare(spec);
  Schedule& sch = p.sch;
  const std::string suffix = trans_b ? "_trans_b" : "";
  sch.tensorize(p.update_loops[3], fmt::format("mma_m16n8k16_{0}{0}f32{1}", dtype, suffix));
  sch.tensorize(sch.get_loops(*p.init)[2], "mma_fill_m16n8_f32");
  sch.tensorize(tile_last_two(sch, "A_shared_warp", 16, 16), "mma_ldmatrix_a_m16k16_" + dtype);
  if (trans_b) {
    sch.tensorize(tile_last_two(sch, "B_shared_warp", 8, 16), "mma_ldmatrix_b_trans_n8k16_" + dtype);
  } else {
    sch.tensorize(tile_last_two(sch, "B_shared_warp", 16, 8), "mma_ldmatrix_b_k16n8_" + dtype);
  }
  sch.tensorize(tile_last_two(sch, "C_acc_warp", 16, 8), "mma_store_m16n8_f32");
  EXPECT_EQ(annotation_of(sch, "C_acc_o"), fmt::format("mma_m16n8k16_{0}{0}f32{1}", dtype, suffix));
  EXPECT_EQ(annotation_of(sch, "C_acc_init_o"), "mma_fill_m16n8_f32");
  EXPECT_EQ(annotation_of(sch, "A_shared_warp_o"), "mma_ldmatrix_a_m16k16_" + dtype);
  EXPECT_NE(annotation_of(sch, "B_shared_warp_o"), "");
  EXPECT_EQ(annotation_of(sch, "C_acc_warp_o"), "mma_store_m16n8_f32");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 3));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 11));
  EXPECT_TRUE(replays_exactly(sch));
}

// The tf32 family on an f32 matmul (its accumulation is the block C, no cast): the
// descriptions are the exact f32 multiply-add, so the tensorized function computes what
// the original does, bit for bit, for either variant.
void tensorize_whole_f32_matmul(int passes, bool trans_b) {
  SCOPED_TRACE(tf32_mma_intrin_name(passes, trans_b));
  Prepared p = prepare(fmt::format("matmul:m=32,n=16,k=24,trans_b={}", trans_b), true, 8, true, 8, "C");
  Schedule& sch = p.sch;
  sch.tensorize(p.update_loops[3], tf32_mma_intrin_name(passes, trans_b));
  sch.tensorize(sch.get_loops(*p.init)[2], "mma_fill_m16n8_f32");
  sch.tensorize(tile_last_two(sch, "A_shared_warp", 16, 8), "mma_load_a_m16k8_f32");
  sch.tensorize(tile_last_two(sch, "B_shared_warp", 8, 8), trans_b ? "mma_load_b_trans_n8k8_f32" : "mma_load_b_k8n8_f32");
  sch.tensorize(tile_last_two(sch, "C_warp", 16, 8), "mma_store_m16n8_f32");
  EXPECT_EQ(annotation_of(sch, "C_o"), tf32_mma_intrin_name(passes, trans_b));
  EXPECT_EQ(annotation_of(sch, "C_init_o"), "mma_fill_m16n8_f32");
  EXPECT_EQ(annotation_of(sch, "A_shared_warp_o"), "mma_load_a_m16k8_f32");
  EXPECT_EQ(annotation_of(sch, "C_warp_o"), "mma_store_m16n8_f32");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 3));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 11));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Tensorize, WholeMatmulTf32) { tensorize_whole_f32_matmul(1, false); }
TEST(Tensorize, WholeMatmulTf32TransB) { tensorize_whole_f32_matmul(1, true); }
TEST(Tensorize, WholeMatmul3xTf32) { tensorize_whole_f32_matmul(3, false); }
TEST(Tensorize, WholeMatmul3xTf32TransB) { tensorize_whole_f32_matmul(3, true); }

// A 16-wide k tile is not the tf32 mma's (k 8): refused.
TEST(Tensorize, Tf32MmaNeedsKTilesOfEight) {
  Prepared p = prepare("matmul:m=32,n=16,k=32", true, 8, true, 16, "C");
  EXPECT_THROW(p.sch.tensorize(p.update_loops[3], tf32_mma_intrin_name(1, false)), ScheduleError);
}

TEST(Tensorize, WholeMatmulF16) { tensorize_whole_matmul("f16", false); }
TEST(Tensorize, WholeMatmulF16TransB) { tensorize_whole_matmul("f16", true); }
TEST(Tensorize, WholeMatmulBf16) { tensorize_whole_matmul("bf16", false); }
TEST(Tensorize, WholeMatmulBf16TransB) { tensorize_whole_matmul("bf16", true); }

TEST(Tensorize, GivenABlockizedBlock) {
  Prepared p = prepare("matmul:m=16,n=16,k=32,dtype=bf16");
  Schedule& sch = p.sch;
  BlockRV outer = sch.blockize(p.update_loops[3]);
  sch.tensorize(outer, "mma_m16n8k16_bf16bf16f32", false);
  EXPECT_EQ(annotation_of(sch, "C_acc_o"), "mma_m16n8k16_bf16bf16f32");
  EXPECT_EQ(to_string(sch.trace().instructions().back()),
            fmt::format("Tensorize({} | \"mma_m16n8k16_bf16bf16f32\" false)", rv_name(outer)));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Tensorize, BatchDimensionIsFixedByTheOffset) {
  // batch_matmul's block has a batch variable that does not move inside the tile.
  Schedule sch(workload("batch_matmul:batch=2,m=16,n=8,k=16,dtype=f16"));
  BlockRV c = sch.get_block("C_acc");
  for (int64_t index : {0, 1}) sch.cache_read(c, index, "warp");
  sch.cache_write(c, 0, "warp");
  std::vector<LoopRV> loops = sch.get_loops(c);
  ASSERT_EQ(loops.size(), 4u);
  sch.decompose_reduction(c, loops[1]);
  sch.tensorize(loops[1], "mma_m16n8k16_f16f16f32");
  EXPECT_EQ(annotation_of(sch, "C_acc_o"), "mma_m16n8k16_f16f16f32");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// ---- Preconditions -------------------------------------------------------------------

// Runs `f`, which must fail precondition `k` named `name` with a reason containing
// `piece`, leaving the schedule as it was.
template <typename F>
void expect_error(Schedule& sch, F f, int k, const std::string& name, const std::string& piece) {
  const ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  try {
    f();
    ADD_FAILURE() << "expected " << name;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::Tensorize) << e.what();
    EXPECT_EQ(e.precondition(), k) << e.what();
    EXPECT_EQ(e.error_name(), name) << e.what();
    EXPECT_NE(e.reason().find(piece), std::string::npos) << e.what();
    EXPECT_TRUE(has_line(e.detail(), "  <-- here")) << e.detail();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size);
}

TEST(Tensorize, UnknownIntrinsic) {
  Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16");
  expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_m16n8k8_f16f16f32"); }, 1, "UnknownIntrinsic",
               "no tensor intrinsic named 'mma_m16n8k8_f16f16f32' (registered: ");
}

TEST(Tensorize, BlockizePreconditionsComeAsTensorize) {
  Prepared p = prepare("matmul:m=16,n=8,k=32,dtype=f16");
  // The init sits next to the reduce loop: two blocks under j0.
  expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[1], "mma_m16n8k16_f16f16f32"); }, 2, "NotSingleBlockChain",
               "blockize: loop");
}

TEST(Tensorize, NotOuterBlock) {
  Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16");
  BlockRV leaf = p.sch.get_block("C_acc");
  expect_error(p.sch, [&] { p.sch.tensorize(leaf, "mma_m16n8k16_f16f16f32"); }, 6, "NotOuterBlock",
               "does not hold a chain of loops down to one block (found a BufferStore)");
}

TEST(Tensorize, AlreadyTensorized) {
  Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16");
  p.sch.tensorize(p.update_loops[3], "mma_m16n8k16_f16f16f32");
  BlockRV outer = p.sch.get_block("C_acc_o");
  expect_error(p.sch, [&] { p.sch.tensorize(outer, "mma_m16n8k16_f16f16f32"); }, 7, "AlreadyTensorized",
               "already tensorized with 'mma_m16n8k16_f16f16f32'");
}

TEST(Tensorize, TileMismatch) {
  {
    // A 16 x 16 x 16 tile for the 16 x 8 x 16 instruction.
    Prepared p = prepare("matmul:m=16,n=32,k=16,dtype=f16", true, 16);
    expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_m16n8k16_f16f16f32"); }, 8, "TileMismatch",
                 "iteration variable 1 of the tile is vi1: S 16 where the intrinsic 'mma_m16n8k16_f16f16f32' has "
                 "vj: S 8");
  }
  {
    // The update is S, S, R; the fill has two spatial variables.
    Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16");
    expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_fill_m16n8_f32"); }, 8, "TileMismatch",
                 "varies 3 iteration variables [vi0: S 16, vi1: S 8, vr0: R 16], the intrinsic 'mma_fill_m16n8_f32' 2");
  }
}

// A hand-written outer block over a zero fill of a fragment: `loops` (three, named a, b,
// e) and the fill's `bindings` and `guard` vary.
std::string outer_fill(const std::string& loops, const std::string& bindings, const std::string& guard = "") {
  return fmt::format(R"(func fill(out C: f32[16, 8]) {{
  block root {{
    alloc W: f32[16, 8] warp
    block W_o {{
      {0} {{
        block W [{1}]{2} {{
          writes W[vi, vj]
          W[vi, vj] = 0f32
        }}
      }}}}}}
    }}
    for i in 16 {{
      for j in 8 {{
        block C [vi: S 16 = i, vj: S 8 = j] {{
          reads W[vi, vj]
          writes C[vi, vj]
          C[vi, vj] = W[vi, vj]
        }}
      }}
    }}
  }}
}}
)",
                     loops, bindings, guard);
}

TEST(Tensorize, TileEnumeration) {
  {
    // Mixed radix: vi = a * 2 + e enumerates [0, 16) once.
    Schedule sch(ir::parse_function(outer_fill("for a in 8 { for b in 8 { for e in 2", "vi: S 16 = a * 2 + e, vj: S 8 = b")));
    sch.tensorize(sch.get_block("W_o"), "mma_fill_m16n8_f32");
    EXPECT_EQ(annotation_of(sch, "W_o"), "mma_fill_m16n8_f32");
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  }
  {
    Schedule sch(ir::parse_function(outer_fill("for a in 16 { for b in 8 { for e in 2", "vi: S 16 = a, vj: S 8 = b")));
    BlockRV outer = sch.get_block("W_o");
    expect_error(sch, [&] { sch.tensorize(outer, "mma_fill_m16n8_f32"); }, 8, "TileMismatch",
                 "loop 'e' (extent 2) feeds no iteration variable: the tile would be computed 2 times");
  }
  {
    Schedule sch(ir::parse_function(outer_fill("for a in 16 { for b in 4 { for e in 1", "vi: S 16 = a, vj: S 8 = b * 2")));
    BlockRV outer = sch.get_block("W_o");
    expect_error(sch, [&] { sch.tensorize(outer, "mma_fill_m16n8_f32"); }, 8, "TileMismatch",
                 "the binding b * 2 of 'vj' does not visit each point of its tile once (loop 'b' has stride 2, 1 "
                 "expected)");
  }
  {
    Schedule sch(ir::parse_function(
        outer_fill("for a in 16 { for b in 8 { for e in 1", "vi: S 16 = a, vj: S 8 = b", " if (a < 15)")));
    BlockRV outer = sch.get_block("W_o");
    expect_error(sch, [&] { sch.tensorize(outer, "mma_fill_m16n8_f32"); }, 8, "TileMismatch",
                 "block 'W' is guarded by a < 15 inside the tile: a partial tile");
  }
  {
    // Reduce where the intrinsic has spatial.
    Schedule sch(ir::parse_function(outer_fill("for a in 16 { for b in 8 { for e in 1", "vi: S 16 = a, vj: R 8 = b")));
    BlockRV outer = sch.get_block("W_o");
    expect_error(sch, [&] { sch.tensorize(outer, "mma_fill_m16n8_f32"); }, 8, "TileMismatch",
                 "iteration variable 1 of the tile is vj: R 8 where the intrinsic 'mma_fill_m16n8_f32' has vj: S 8");
  }
}

// A hand-written fragment matmul: the mismatch tests vary one part of it.
std::string fragment_matmul(const std::string& update, const std::string& b_shape = "[32, 16]",
                            const std::string& a_dtype = "f16") {
  return fmt::format(R"(func mm(in A: {2}[32, 32], in B: f16{1}, out C: f32[32, 16]) {{
  block root {{
    alloc A_w: {2}[32, 32] warp
    alloc B_w: f16{1} warp
    alloc C_w: f32[32, 16] warp
    for i in 32 {{
      for k in 32 {{
        block A_w [v0: S 32 = i, v1: S 32 = k] {{
          reads A[v0, v1]
          writes A_w[v0, v1]
          A_w[v0, v1] = A[v0, v1]
        }}
      }}
    }}
    for a in {3} {{
      for b in {4} {{
        block B_w [v0: S {3} = a, v1: S {4} = b] {{
          reads B[v0, v1]
          writes B_w[v0, v1]
          B_w[v0, v1] = B[v0, v1]
        }}
      }}
    }}
    for i in 32 {{
      for j in 16 {{
        block C_init [vi: S 32 = i, vj: S 16 = j] {{
          writes C_w[vi, vj]
          C_w[vi, vj] = 0f32
        }}
      }}
    }}
    for i0 in 2 {{
      for j0 in 2 {{
        for k0 in 2 {{
          for i1 in 16 {{
            for j1 in 8 {{
              for k1 in 16 {{
                block U [vi: S 32 = i0 * 16 + i1, vj: S 16 = j0 * 8 + j1, vk: R 32 = k0 * 16 + k1] {{
                  reads C_w[0 +: 32, 0 +: 16], A_w[vi, vk], B_w[0 +: {3}, 0 +: {4}]
                  writes C_w[vi, vj]
                  {0}
                }}
              }}
            }}
          }}
        }}
      }}
    }}
    for i in 32 {{
      for j in 16 {{
        block C [vi: S 32 = i, vj: S 16 = j] {{
          reads C_w[vi, vj]
          writes C[vi, vj]
          C[vi, vj] = C_w[vi, vj]
        }}
      }}
    }}
  }}
}}
)",
                     update, b_shape, a_dtype, b_shape == "[32, 16]" ? 32 : 16, b_shape == "[32, 16]" ? 16 : 32);
}

constexpr const char* kUpdate = "C_w[vi, vj] = C_w[vi, vj] + f32(A_w[vi, vk]) * f32(B_w[vk, vj])";

// Tensorizes the update of fragment_matmul(...) at i1; the lookup is recorded now, so
// that a failing tensorize leaves the trace as it was.
std::function<void()> tensorize_update(Schedule& sch, const std::string& intrin) {
  LoopRV i1 = sch.get_loops(sch.get_block("U"))[3];
  return [&sch, i1, intrin] { sch.tensorize(i1, intrin); };
}

TEST(Tensorize, HandWrittenFragmentsMatch) {
  Schedule sch(ir::parse_function(fragment_matmul(kUpdate)));
  tensorize_update(sch, "mma_m16n8k16_f16f16f32")();
  EXPECT_EQ(annotation_of(sch, "U_o"), "mma_m16n8k16_f16f16f32");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Tensorize, BufferMismatch) {
  // C_w read at the start of the sum and also added a second time: one access too many.
  Schedule sch(ir::parse_function(
      fragment_matmul("C_w[vi, vj] = C_w[vi, vj] + f32(A_w[vi, vk]) * f32(B_w[vk, vj]) + C_w[vi, vj]")));
  expect_error(sch, tensorize_update(sch, "mma_m16n8k16_f16f16f32"), 9, "BufferMismatch",
               "block 'U' makes 5 accesses (store C_w, load C_w, load A_w, load B_w, load C_w), the intrinsic "
               "'mma_m16n8k16_f16f16f32' makes 4 accesses");
  // A_w read where the intrinsic reads B: the pairing is not one to one.
  Schedule swapped(ir::parse_function(
      fragment_matmul("C_w[vi, vj] = C_w[vi, vj] + f32(A_w[vi, vk]) * f32(A_w[vi, vk])")));
  expect_error(swapped, tensorize_update(swapped, "mma_m16n8k16_f16f16f32"), 9, "BufferMismatch",
               "access 3 of block 'U' is a load of 'A_w' where the intrinsic 'mma_m16n8k16_f16f16f32' has a load of 'B'");
}

TEST(Tensorize, DtypeMismatch) {
  Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16");
  expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_m16n8k16_bf16bf16f32"); }, 10, "DtypeMismatch",
               "buffer 'A_shared_warp' is f16 where the intrinsic 'mma_m16n8k16_bf16bf16f32' needs bf16 for its "
               "operand 'A'");
}

TEST(Tensorize, ScopeMismatch) {
  // Operands straight from global memory: the mma reads fragments only.
  Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16", false);
  expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_m16n8k16_f16f16f32"); }, 11, "ScopeMismatch",
               "buffer 'A' is in scope 'global' where the intrinsic 'mma_m16n8k16_f16f16f32' needs warp for its "
               "operand 'A'");
  // ldmatrix reads shared memory only.
  Schedule sch(ir::parse_function(fragment_matmul(kUpdate)));
  LoopRV tile = tile_last_two(sch, "A_w", 16, 16);
  expect_error(sch, [&] { sch.tensorize(tile, "mma_ldmatrix_a_m16k16_f16"); }, 11, "ScopeMismatch",
               "buffer 'A' is in scope 'global' where the intrinsic 'mma_ldmatrix_a_m16k16_f16' needs shared or "
               "shared.dyn for its operand 'S'");
}

TEST(Tensorize, PatternMismatch) {
  {
    Prepared p = prepare("matmul:m=16,n=8,k=16,dtype=f16", true, 8, false);
    expect_error(p.sch, [&] { p.sch.tensorize(p.update_loops[3], "mma_m16n8k16_f16f16f32"); }, 12,
                 "PatternMismatch",
                 "block 'C_acc' has an init and the intrinsic 'mma_m16n8k16_f16f16f32' has none: decompose the "
                 "reduction first");
  }
  {
    Schedule sch(ir::parse_function(fragment_matmul("C_w[vi, vj] = C_w[vi, vj] - f32(A_w[vi, vk]) * f32(B_w[vk, vj])")));
    expect_error(sch, tensorize_update(sch, "mma_m16n8k16_f16f16f32"), 12, "PatternMismatch",
                 "the block has `C_w[vi, vj] - f32(A_w[vi, vk]) * f32(B_w[vk, vj])` (f32) where the intrinsic has "
                 "`C[vi, vj] + f32(A[vi, vk]) * f32(B[vk, vj])` (f32)");
  }
}

TEST(Tensorize, FillOnHandWrittenInit) {
  Schedule sch(ir::parse_function(fragment_matmul(kUpdate)));
  LoopRV tile = tile_last_two(sch, "C_init", 16, 8);
  sch.tensorize(tile, "mma_fill_m16n8_f32");
  EXPECT_EQ(annotation_of(sch, "C_init_o"), "mma_fill_m16n8_f32");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  // The store's copy is no fill: one access against two.
  LoopRV copy = tile_last_two(sch, "C", 16, 8);
  expect_error(sch, [&] { sch.tensorize(copy, "mma_fill_m16n8_f32"); }, 9, "BufferMismatch",
               "block 'C' makes 2 accesses (store C, load C_w)");
}

TEST(Tensorize, LayoutMismatch) {
  {
    // B stored [n, k] against the [k, n] instruction: same tile shape, other layout.
    Schedule sch(ir::parse_function(
        fragment_matmul("C_w[vi, vj] = C_w[vi, vj] + f32(A_w[vi, vk]) * f32(B_w[vj, vk])", "[16, 32]")));
    expect_error(sch, tensorize_update(sch, "mma_m16n8k16_f16f16f32"), 13, "LayoutMismatch",
                 "a load of 'B_w' is at [vj, vk] in the tile where the intrinsic accesses [vk, vj]");
    // ... which the _trans_b variant takes.
    tensorize_update(sch, "mma_m16n8k16_f16f16f32_trans_b")();
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  }
  {
    // A read with stride 2 along k is no dense tile.
    Schedule sch(ir::parse_function(fragment_matmul(
        "C_w[vi, vj] = C_w[vi, vj] + f32(A_w[vi, vk // 2]) * f32(B_w[vk, vj])")));
    expect_error(sch, tensorize_update(sch, "mma_m16n8k16_f16f16f32"), 13, "LayoutMismatch",
                 "a load of 'A_w'");
  }
  {
    // The accumulator read one tile away from where it is written.
    Schedule sch(ir::parse_function(
        fragment_matmul("C_w[vi, vj] = C_w[(vi + 16) % 32, vj] + f32(A_w[vi, vk]) * f32(B_w[vk, vj])")));
    expect_error(sch, tensorize_update(sch, "mma_m16n8k16_f16f16f32"), 13, "LayoutMismatch", "C_w");
  }
}

}  // namespace
}  // namespace dragon::schedule
