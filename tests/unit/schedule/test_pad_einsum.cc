// pad_einsum: a 100 x 60 x 27 GEMM with reindexed operands grows to 112 x 64 x 32 with
// zero-writing producers; semantic preservation on the interpreter (f32 and f16 GEMMs,
// batched GEMMs, a conv2d with reindexed operands, paddings that leave some dimensions
// alone); paddings of 1 or of divisible extents change nothing; replay, JSON and the
// recorded layout; each precondition's error.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/apply_instruction.h"
#include "dragon/schedule/instruction_signature.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::expect_refusal;
using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

// The one leaf block with a reduction iteration variable.
BlockRV pad_einsum_reduction_block(Schedule& sch) {
  for (const ir::BlockTree::BlockInfo& info : sch.tree().blocks()) {
    if (!info.leaf) continue;
    for (const ir::IterVar& iv : info.block->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) return sch.get_block(info.block->name);
    }
  }
  ADD_FAILURE() << "no reduction block";
  return BlockRV{};
}

// Every read of the block reindexed, and its write when `write` (when the output is a
// parameter, the padding needs the copy back).
void pad_einsum_reindex_all(Schedule& sch, BlockRV block, bool write = true) {
  const size_t reads = sch.get(block)->reads.size();
  for (size_t i = 0; i < reads; ++i) sch.reindex(block, static_cast<int64_t>(i), Type::kRead);
  if (write) sch.reindex(block, 0, Type::kWrite);
}

TEST(PadEinsum, GemmGrowsItsIntermediatesAndTheProducersWriteZeros) {
  Schedule sch(workload("matmul:m=100,n=60,k=27"));
  BlockRV c = sch.get_block("C");
  pad_einsum_reindex_all(sch, c);
  sch.pad_einsum(c, {16, 8, 16});
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc A_reindex: f32[112, 32]")) << text;
  EXPECT_TRUE(has_line(text, "alloc B_reindex: f32[64, 32]")) << text;
  EXPECT_TRUE(has_line(text, "alloc C_reindex: f32[112, 64]")) << text;
  EXPECT_TRUE(has_line(text, "block C [vi0: S 112 = i0, vi1: S 64 = i1, vr0: R 32 = r0] {")) << text;
  EXPECT_TRUE(has_line(text, "A_reindex[vi0, vr0] = select(vi0 < 100 && vr0 < 27, A[vi0, vr0], 0f32)")) << text;
  EXPECT_TRUE(has_line(text, "B_reindex[vi1, vr0] = select(vi1 < 60 && vr0 < 27, B[vr0, vi1], 0f32)")) << text;
  // The copy back keeps its domain: it reads the valid 100 x 60 corner.
  EXPECT_TRUE(has_line(text, "block C_reindex [vi0: S 100 = ax0, vi1: S 60 = ax1] {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  const std::string trace = sch.trace().to_string();
  EXPECT_NE(trace.find("PadEinsum(b0 | [16, 8, 16])"), std::string::npos) << trace;
  // TVM's layout: the block an input, the paddings one attr.
  const Instruction& inst = sch.trace()[sch.trace().size() - 1];
  EXPECT_EQ(inst.kind, InstructionKind::PadEinsum);
  EXPECT_EQ(inst.inputs, (std::vector<Arg>{c}));
  EXPECT_EQ(inst.attrs, (std::vector<Arg>{Arg::int_list({16, 8, 16})}));
  EXPECT_TRUE(inst.outputs.empty());
}

// A workload, the block's paddings, and whether its output needs the copy back.
struct PadCase {
  const char* spec;
  std::vector<int64_t> padding;
  bool reindex_write;
};

TEST(PadEinsum, PreservesSemanticsForEveryOperatorKind) {
  const std::vector<PadCase> cases = {
      {"matmul:m=100,n=60,k=27", {16, 8, 16}, true},
      {"matmul:m=100,n=60,k=27", {16, 1, 8}, true},  // n alone stays
      {"matmul:m=33,n=20,k=17,dtype=f16", {16, 8, 16}, false},  // the f32 accumulator is an intermediate
      {"matmul:m=33,n=20,k=17,dtype=f16", {16, 8, 16}, true},
      {"matmul:m=30,n=17,k=9,trans_b=true", {16, 8, 8}, true},
      {"batch_matmul:batch=2,m=20,n=12,k=9", {1, 16, 8, 8}, true},
      {"batch_matmul:batch=3,m=18,n=10,k=20,dtype=f16", {2, 16, 8, 16}, false},
      // n, oc, oh, ow, rc, kh, kw of a conv whose reads and write are reindexed.
      {"conv2d:batch=1,in_channels=3,out_channels=5,size=6x6,kernel=3x3,padding=1x1", {1, 8, 4, 4, 4, 1, 2}, true},
      {"conv2d:batch=2,in_channels=3,out_channels=4,size=5x5,kernel=3x3,dtype=f16", {1, 8, 1, 4, 2, 2, 1}, false},
  };
  for (const PadCase& c : cases) {
    SCOPED_TRACE(c.spec);
    Schedule sch(workload(c.spec));
    BlockRV block = pad_einsum_reduction_block(sch);
    pad_einsum_reindex_all(sch, block, c.reindex_write);
    sch.pad_einsum(block, c.padding);
    const ir::BlockNode* padded = sch.get(block);
    for (size_t p = 0; p < c.padding.size(); ++p) {
      EXPECT_EQ(*ir::as_const_int(padded->iter_vars[p].dom.extent) % c.padding[p], 0) << p;
    }
    EXPECT_FALSE(ir::structural_equal(sch.original(), sch.func()));
    // Adding zeros leaves every sum as it was, bit for bit.
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 11));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(PadEinsum, PaddingsOfOneOrOfDivisibleExtentsChangeNothing) {
  // Parameters are no obstacle where nothing grows.
  Schedule sch(workload("matmul:m=32,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  const ir::PrimFunc before = sch.func();
  sch.pad_einsum(c, {16, 8, 16});
  sch.pad_einsum(c, {1, 1, 1});
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), 3u);
  EXPECT_TRUE(replays_exactly(sch));
  // Only the dimension that grows needs an intermediate: B (k x n) is left alone when only
  // m grows.
  Schedule rows(workload("matmul:m=20,n=16,k=16"));
  BlockRV r = rows.get_block("C");
  rows.reindex(r, 0, Type::kRead);
  rows.reindex(r, 0, Type::kWrite);
  rows.pad_einsum(r, {16, 8, 16});
  const std::string text = ir::print_function(rows.func());
  EXPECT_TRUE(has_line(text, "alloc A_reindex: f32[32, 16]")) << text;
  EXPECT_TRUE(has_line(text, "A_reindex[vi0, vr0] = select(vi0 < 20, A[vi0, vr0], 0f32)")) << text;
  EXPECT_TRUE(same_outputs(rows.original(), rows.func()));
}

// A max reduction and a sum of two loads (not a product), both over intermediates.
constexpr const char* kNonSums = R"(func non_sums(in A: f32[6, 5], out C: f32[6], out D: f32[6]) {
  block root {
    alloc B: f32[6, 5]
    for i0 in 6 {
      for i1 in 5 {
        block B [v0: S 6 = i0, v1: S 5 = i1] {
          reads A[v0, v1]
          writes B[v0, v1]
          B[v0, v1] = A[v0, v1] * 2f32
        }
      }
    }
    for i0 in 6 {
      for k in 5 {
        block C [v0: S 6 = i0, r: R 5 = k] {
          reads B[v0, r]
          writes C[v0]
          init {
            C[v0] = -1000f32
          }
          C[v0] = max(C[v0], B[v0, r])
        }
      }
    }
    for i0 in 6 {
      for k in 5 {
        block D [v0: S 6 = i0, r: R 5 = k] {
          reads B[v0, r]
          writes D[v0]
          init {
            D[v0] = 0f32
          }
          D[v0] = D[v0] + (B[v0, r] + 1f32)
        }
      }
    }
  }
}
)";

// E sums B * B over the r that B's producer, a reduction, also reduces.
constexpr const char* kReducedProducer = R"(func reduced(in A: f32[6, 5, 3], out E: f32[6]) {
  block root {
    alloc B: f32[6, 5]
    for i0 in 6 {
      for i1 in 5 {
        for i2 in 3 {
          block B [v0: S 6 = i0, v1: S 5 = i1, r: R 3 = i2] {
            reads A[v0, v1, r]
            writes B[v0, v1]
            init {
              B[v0, v1] = 0f32
            }
            B[v0, v1] = B[v0, v1] + A[v0, v1, r]
          }
        }
      }
    }
    for i0 in 6 {
      for k in 5 {
        block E [v0: S 6 = i0, r: R 5 = k] {
          reads B[v0, r]
          writes E[v0]
          init {
            E[v0] = 0f32
          }
          E[v0] = E[v0] + B[v0, r] * B[v0, r]
        }
      }
    }
  }
}
)";

TEST(PadEinsum, Preconditions) {
  // 1) the root block.
  Schedule sch(workload("matmul:m=100,n=60,k=27"));
  BlockRV root = sch.get_block("root");
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(root, {}); },
                 {1, "NotLeafBlock", "block b0"}, "block root", "has blocks inside it");
  // 2) one padding per variable, each positive.
  BlockRV c = sch.get_block("C");
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(c, {16, 8}); },
                 {2, "PaddingMismatch", "padding"}, "block C [", "2 paddings for the 3 iteration variables");
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(c, {16, 0, 8}); },
                 {2, "PaddingMismatch", "padding"}, "block C [", "padding 0 is not in [1, 1048576]");
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(c, {16, int64_t{1} << 62, 8}); },
                 {2, "PaddingMismatch", "padding"}, "block C [", "is not in [1, 1048576]");
  // 6) a parameter input: reindex it first.
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(c, {16, 8, 16}); },
                 {6, "NotIntermediate", "block b1"}, "block C [", "'A' is a parameter of the function: reindex it first");
  // ... and a parameter output.
  sch.reindex(c, 0, Type::kRead);
  sch.reindex(c, 1, Type::kRead);
  expect_refusal(InstructionKind::PadEinsum, sch, [&] { sch.pad_einsum(c, {16, 8, 16}); },
                 {6, "NotIntermediate", "block b1"}, "block C [", "'C' is a parameter of the function: reindex it first");
  // 5) a padded variable under a split loop.
  Schedule split = sch.copy();
  split.reindex(c, 0, Type::kWrite);
  split.split(split.get_loops(c)[0], {None{}, int64_t{4}});
  expect_refusal(InstructionKind::PadEinsum, split, [&] { split.pad_einsum(c, {16, 8, 16}); },
                 {5, "NonTrivialBinding", "block b1"}, "block C [", "not to a loop of its own");
  // ... but the variables that do not grow may be bound anyhow.
  split.pad_einsum(c, {1, 8, 16});
  EXPECT_TRUE(same_outputs(split.original(), split.func()));
  // A predicate (a split that does not divide) refuses any growth, and nothing else.
  Schedule guarded = sch.copy();
  guarded.reindex(c, 0, Type::kWrite);
  guarded.split(guarded.get_loops(c)[1], {None{}, int64_t{7}});
  expect_refusal(InstructionKind::PadEinsum, guarded, [&] { guarded.pad_einsum(c, {16, 1, 1}); },
                 {5, "NonTrivialBinding", "block b1"}, "block C [", "runs under the predicate");
  const ir::PrimFunc unpadded = guarded.func();
  guarded.pad_einsum(c, {1, 1, 1});
  EXPECT_TRUE(guarded.func().same_as(unpadded));

  // 3) not in einsum form: a conv reads X_pad at oh + kh.
  Schedule conv(workload("conv2d:batch=1,in_channels=3,out_channels=4,size=6x6,kernel=3x3,padding=1x1"));
  BlockRV y = conv.get_block("Y");
  expect_refusal(InstructionKind::PadEinsum, conv, [&] { conv.pad_einsum(y, {1, 8, 4, 4, 4, 1, 1}); },
                 {3, "NotEinsum", "block b0"}, "block Y [", "each index must be a bare iteration variable");

  // 4) a max reduction, and a sum whose padded steps would add B + 1.
  Schedule non_sums(ir::parse_function(kNonSums));
  BlockRV max = non_sums.get_block("C");
  expect_refusal(InstructionKind::PadEinsum, non_sums, [&] { non_sums.pad_einsum(max, {1, 8}); },
                 {4, "NonSumReduction", "block b0"}, "block C [", "only zero, the sum's identity");
  BlockRV d = non_sums.get_block("D");
  expect_refusal(InstructionKind::PadEinsum, non_sums, [&] { non_sums.pad_einsum(d, {1, 8}); },
                 {4, "NonSumReduction", "block b1"}, "block D [", "would not add zero");

  // 7) a producer that is itself a reduction: its padding would need its init guarded.
  Schedule reduced(ir::parse_function(kReducedProducer));
  BlockRV e = reduced.get_block("E");
  expect_refusal(InstructionKind::PadEinsum, reduced, [&] { reduced.pad_einsum(e, {1, 8}); },
                 {7, "UnsupportedProducer", "block b0"}, "block B [", "is not a spatial block storing it once");
}

TEST(PadEinsum, MalformedInstructionsAreUserErrors) {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  const std::vector<std::pair<Instruction, std::string>> cases = {
      {Instruction{InstructionKind::PadEinsum, {c}, {Arg(int64_t{16})}, {}}, "PadEinsum: expected a list"},
      {Instruction{InstructionKind::PadEinsum, {c}, {}, {}}, "PadEinsum: expected 1 attrs, got 0"},
  };
  for (const auto& [inst, message] : cases) {
    try {
      apply_instruction(sch, inst, std::nullopt);
      ADD_FAILURE() << "replayed " << to_string(inst);
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  const InstructionSignature& sig = instruction_signature(InstructionKind::PadEinsum);
  EXPECT_EQ(sig.python_name, "pad_einsum");
  ASSERT_EQ(sig.slots.size(), 2u);
  EXPECT_EQ(sig.slots[1].shape, SlotShape::kList);
  EXPECT_EQ(sig.slots[1].source, SlotSource::kAttr);
  EXPECT_FALSE(instruction_kind_is_pure(InstructionKind::PadEinsum));
}

}  // namespace
}  // namespace dragon::schedule
