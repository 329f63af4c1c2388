// reindex: the copy stages and the rewritten block of conv2d (padded input, weight,
// output), semantic preservation on the interpreter for conv1d/2d/3d, strided, dilated,
// grouped and transposed convs and a matmul with every read and write reindexed (each
// access of the block then an iteration variable per dimension), replay and JSON, and each
// precondition's error.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "random_trace.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::expect_refusal;
using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

constexpr const char* kConv2d = "conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1";

TEST(ReIndex, Conv2dInputWeightAndOutput) {
  Schedule sch(workload(kConv2d));
  BlockRV y = sch.get_block("Y");
  BlockRV x_copy = sch.reindex(y, 0, Type::kRead);
  BlockRV w_copy = sch.reindex(y, 1, Type::kRead);
  BlockRV y_copy = sch.reindex(y, 0, Type::kWrite);
  EXPECT_EQ(sch.get(x_copy)->name, "X_pad_reindex");
  EXPECT_EQ(sch.get(w_copy)->name, "W_reindex");
  EXPECT_EQ(sch.get(y_copy)->name, "Y_reindex");
  const std::string text = ir::print_function(sch.func());
  // The input's dimensions are the variables its index uses, in block order (not oc).
  EXPECT_TRUE(has_line(text, "alloc X_pad_reindex: f32[1, 6, 6, 2, 3, 3]")) << text;
  EXPECT_TRUE(has_line(text, "alloc Y_reindex: f32[1, 3, 6, 6]")) << text;
  EXPECT_TRUE(has_line(text, "X_pad_reindex[vi0, vi2, vi3, vr0, vr1, vr2] = X_pad[vi0, vr0, vi2 + vr1, vi3 + vr2]"))
      << text;
  EXPECT_TRUE(has_line(text, "Y[vi0, vi1, vi2, vi3] = Y_reindex[vi0, vi1, vi2, vi3]")) << text;
  EXPECT_TRUE(has_line(text, "reads X_pad_reindex[vi0, vi2, vi3, vr0, vr1, vr2], W_reindex[vi1, vr0, vr1, vr2]")) << text;
  EXPECT_TRUE(has_line(text, "Y_reindex[vi0, vi1, vi2, vi3] = Y_reindex[vi0, vi1, vi2, vi3] + X_pad_reindex[vi0, vi2, vi3, "
                             "vr0, vr1, vr2] * W_reindex[vi1, vr0, vr1, vr2]"))
      << text;
  // The copies run right before (reads) and after (the write) the block's loop nest.
  const size_t pad = text.find("block X_pad ["), x = text.find("block X_pad_reindex ["),
               w = text.find("block W_reindex ["), conv = text.find("block Y ["), back = text.find("block Y_reindex [");
  EXPECT_TRUE(pad < x && x < w && w < conv && conv < back) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  EXPECT_NE(sch.trace().to_string().find("b3 = ReIndex(b0 | 0 1)"), std::string::npos) << sch.trace().to_string();
}

// The one leaf block with a reduction iteration variable.
BlockRV reduction_block(Schedule& sch) {
  for (const ir::BlockTree::BlockInfo& info : sch.tree().blocks()) {
    if (!info.leaf) continue;
    for (const ir::IterVar& iv : info.block->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) return sch.get_block(info.block->name);
    }
  }
  ADD_FAILURE() << "no reduction block";
  return BlockRV{};
}

// Whether every index of every access region of `block` is an iteration variable.
::testing::AssertionResult trivial_accesses(const ir::BlockNode* block) {
  for (const auto* regions : {&block->reads, &block->writes}) {
    for (const ir::BufferRegion& r : *regions) {
      for (const ir::Range& range : r.region) {
        const bool iter = std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                                      [&](const ir::IterVar& iv) { return iv.var.same_as(range.min); });
        if (!iter) {
          return ::testing::AssertionFailure() << r.buffer->name << " is accessed at " << ir::print_expr(range.min);
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(ReIndex, EveryAccessOfConvsAndMatmulPreservesSemantics) {
  for (const char* spec : {"conv1d:batch=2,in_channels=3,out_channels=4,size=10,kernel=3,padding=1",
                           kConv2d,
                           "conv3d:batch=1,in_channels=2,out_channels=2,size=4x5x4,kernel=3x2x3,padding=1x0x1",
                           "conv2d:batch=1,in_channels=2,out_channels=3,size=9x7,kernel=3x3,stride=2x2,padding=1x1",
                           "conv2d:batch=1,in_channels=2,out_channels=3,size=8x8,kernel=3x3,dilation=2x2,padding=2x2",
                           "conv2d:batch=1,in_channels=4,out_channels=6,size=6x6,kernel=3x3,groups=2,padding=1x1",
                           "conv_transpose2d:batch=1,in_channels=2,out_channels=3,size=4x4,kernel=3x3,stride=2x2,"
                           "padding=1x1",
                           "conv2d:batch=1,in_channels=4,out_channels=4,size=6x6,kernel=3x3,dtype=f16,padding=1x1",
                           "matmul:m=12,n=8,k=6"}) {
    SCOPED_TRACE(spec);
    Schedule sch(workload(spec));
    BlockRV block = reduction_block(sch);
    const size_t reads = sch.get(block)->reads.size();
    for (size_t i = 0; i < reads; ++i) sch.reindex(block, static_cast<int64_t>(i), Type::kRead);
    sch.reindex(block, 0, Type::kWrite);
    EXPECT_TRUE(trivial_accesses(sch.get(block))) << ir::print_function(sch.func());
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// A block that loads B at two indices, one reading through an inner loop, a write at
// a non-variable index, a reduction into an inout buffer without init, a store under a
// condition, and two blocks in one loop nest.
constexpr const char* kAwkward = R"(func awkward(in A: f32[8], inout D: f32[4], out C: f32[8], out E: f32[8], out G: f32[4]) {
  block root {
    alloc B: f32[8]
    for i0 in 8 {
      block B [v0: S 8 = i0] {
        reads A[v0]
        writes B[v0]
        B[v0] = A[v0] * 2f32
      }
      block E [v0: S 8 = i0] {
        reads B[v0]
        writes E[v0]
        E[v0] = B[v0] + 1f32
      }
    }
    for i0 in 4 {
      block pairs [v0: S 4 = i0] {
        reads B[v0 * 2 +: 2]
        writes C[v0 * 2]
        C[v0 * 2] = B[v0 * 2] + B[v0 * 2 + 1]
      }
    }
    for i0 in 4 {
      for k in 2 {
        block acc [v0: S 4 = i0, r: R 2 = k] {
          reads D[v0], B[v0 * 2 + r]
          writes D[v0]
          D[v0] = D[v0] + B[v0 * 2 + r]
        }
      }
    }
    for i0 in 4 {
      block guarded [v0: S 4 = i0] {
        reads B[v0]
        writes G[v0]
        if (v0 < 2) {
          G[v0] = B[v0]
        }
      }
    }
    for i0 in 2 {
      block sums [v0: S 2 = i0] {
        reads B[v0 * 4 +: 4]
        writes C[v0]
        C[v0] = 0f32
        for k in 4 {
          C[v0] = C[v0] + B[v0 * 4 + k]
        }
      }
    }
  }
}
)";

TEST(ReIndex, Preconditions) {
  Schedule sch(ir::parse_function(kAwkward));
  BlockRV pairs = sch.get_block("pairs");
  BlockRV acc = sch.get_block("acc");
  BlockRV sums = sch.get_block("sums");
  BlockRV e = sch.get_block("E");
  BlockRV guarded = sch.get_block("guarded");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(pairs, 1, Type::kRead); }, {1, "IndexOutOfRange", "buffer_index"},
               "block pairs [", "the block reads 1 buffers");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(pairs, 1, Type::kWrite); }, {1, "IndexOutOfRange", "buffer_index"},
               "block pairs [", "the block writes 1 buffers");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(pairs, 0, Type::kRead); }, {3, "InconsistentAccess", "block b0"},
               "block pairs [", "the block accesses 'B' at [v0 * 2] and at [v0 * 2 + 1]");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(sums, 0, Type::kRead); }, {3, "InconsistentAccess", "block b2"}, "block sums [",
               "uses a variable other than the block's iteration variables");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(acc, 0, Type::kRead); }, {4, "UnsupportedAccess", "block b1"}, "block acc [",
               "the block also writes 'D'");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(pairs, 0, Type::kWrite); }, {4, "UnsupportedAccess", "block b0"},
               "block pairs [", "each index must be a distinct iteration variable");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(acc, 0, Type::kWrite); }, {4, "UnsupportedAccess", "block b1"}, "block acc [",
               "without an init writing it first");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(guarded, 0, Type::kWrite); }, {4, "UnsupportedAccess", "block b4"},
               "block guarded [", "the block stores 'G' under a condition");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(e, 0, Type::kRead); }, {5, "SharedLoopNest", "block b3"}, "block B [",
               "block 'B' writes 'B' in the same loop nest");
  // A guarded load is fine where its index stays in the buffer.
  sch.reindex(guarded, 0, Type::kRead);
  // What is allowed still applies and preserves the results.
  sch.reindex(acc, 1, Type::kRead);
  sch.reindex(e, 0, Type::kWrite);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// With the pad inlined the conv loads X only where a select finds its index inside X;
// a copy would load it everywhere.
TEST(ReIndex, IndicesLeavingTheBufferAreRefused) {
  Schedule sch(workload(kConv2d));
  sch.compute_inline(sch.get_block("X_pad"));
  BlockRV y = sch.get_block("Y");
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(y, 0, Type::kRead); }, {4, "UnsupportedAccess", "block b1"}, "block Y [",
               "index vi2 + vr1 - 1 of 'X' may leave [0, 6) over the block's domain");
  sch.reindex(y, 1, Type::kRead);  // the weight's indices stay inside it
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
}

TEST(ReIndex, BlockWithBlocksInsideIsRefused) {
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  BlockRV c = reduction_block(sch);
  BlockRV outer = sch.blockize(sch.get_loops(c)[1]);
  const std::string name = sch.get(outer)->name;
  expect_refusal(InstructionKind::ReIndex, sch, [&] { sch.reindex(outer, 0, Type::kRead); }, {2, "NotLeafBlock", "block b4"}, "block " + name + " [",
               "the block has blocks inside it");
}

TEST(ReIndex, PredicatedWriteIsRefused) {
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  BlockRV c = reduction_block(sch);
  std::vector<LoopRV> loops = sch.get_loops(c);
  sch.split(loops[0], {None{}, int64_t{5}});
  try {
    sch.reindex(c, 0, Type::kWrite);
    ADD_FAILURE() << "expected UnsupportedAccess";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.error_name(), "UnsupportedAccess");
    EXPECT_NE(e.reason().find("predicate"), std::string::npos) << e.reason();
  }
  // A read copies the whole domain, which the block's predicate does not change.
  sch.reindex(c, 0, Type::kRead);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
}

TEST(ReIndex, MalformedInstructionsAreUserErrors) {
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  sch.reindex(reduction_block(sch), 0, Type::kRead);
  auto with = [&](const std::function<void(Instruction&)>& edit) {
    Trace t;
    for (Instruction inst : sch.trace().instructions()) {
      if (inst.kind == InstructionKind::ReIndex) edit(inst);
      t.append(inst);
    }
    return t;
  };
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[1] = Arg(int64_t{2}); }), sch.original()), UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs.pop_back(); }), sch.original()), UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[0] = Arg("x"); }), sch.original()), UserError);
}

// Random traces mixing reindex, transform_block_layout (random permutations and fusions)
// and pad_einsum (random paddings, after reindexing the block's accesses half the time)
// with every other primitive (random_trace.h) keep each op's results and replay.
TEST(ReIndex, RandomTracesWithLayoutStepsPreserveSemanticsAndReplay) {
  std::map<std::string, int> applied;
  for (const char* spec : {"matmul:m=12,n=8,k=6", kConv2d, "conv1d:batch=2,in_channels=3,out_channels=4,size=10,kernel=3",
                           "softmax:shape=4x16", "layer_norm:shape=3x4x10", "batch_matmul:batch=2,m=4,n=6,k=5",
                           "sum", "max_pool2d"}) {
    ir::PrimFunc func = workload(spec);
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      testing::RandomTraceOptions options;
      options.steps = 10;
      options.reindex_steps = true;
      testing::RandomTraceStats stats;
      Schedule sch = testing::random_schedule(func, seed, options, &stats);
      SCOPED_TRACE(std::string(spec) + " seed " + std::to_string(seed) + ":\n" + sch.trace().to_string());
      for (const std::string& b : stats.broken) ADD_FAILURE() << b;
      EXPECT_TRUE(same_outputs(func, sch.func(), 7, /*exact=*/!stats.reassociated));
      EXPECT_TRUE(replays_exactly(sch));
      for (const auto& [name, count] : stats.applied_by_step) applied[name] += count;
    }
  }
  EXPECT_GE(applied["reindex"], 30);
  EXPECT_GE(applied["transform_block_layout"], 30);
  EXPECT_GE(applied["pad_einsum (grew)"], 5);
  std::printf("random layout steps applied: reindex %d, transform_block_layout %d, pad_einsum %d (grew %d)\n",
              applied["reindex"], applied["transform_block_layout"], applied["pad_einsum"],
              applied["pad_einsum (grew)"]);
}

}  // namespace
}  // namespace dragon::schedule
