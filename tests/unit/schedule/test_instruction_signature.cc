// The kinds' declarations (instruction_signature.h): each is consistent; recording and
// replay follow it (operands where the slots say, counts and types checked with errors
// naming the kind); older TVM layouts replay as the pinned ones and are rewritten to them.
#include <gtest/gtest.h>

#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/apply_instruction.h"
#include "dragon/schedule/instruction_signature.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::workload;

TEST(InstructionSignature, EveryDeclarationIsConsistent) {
  for (int k = 0; k < kNumInstructionKinds; ++k) {
    const auto kind = static_cast<InstructionKind>(k);
    EXPECT_EQ(signature_problem(kind), "") << instruction_kind_name(kind);
    EXPECT_FALSE(instruction_signature(kind).python_name.empty()) << instruction_kind_name(kind);
  }
  // Purity is the declaration's: lookups and samples only.
  EXPECT_TRUE(instruction_kind_is_pure(InstructionKind::GetLoops));
  EXPECT_TRUE(instruction_kind_is_pure(InstructionKind::SampleCategorical));
  EXPECT_FALSE(instruction_kind_is_pure(InstructionKind::Split));
  EXPECT_FALSE(instruction_kind_is_pure(InstructionKind::EnterPostproc));
}

TEST(InstructionSignature, SlotsAreNumberedBySource) {
  const InstructionSignature& split = instruction_signature(InstructionKind::Split);
  ASSERT_EQ(split.slots.size(), 4u);
  EXPECT_EQ(split.slots[0].source, SlotSource::kInput);
  EXPECT_EQ(split.slots[1].source, SlotSource::kInputsFrom);
  EXPECT_EQ(split.slots[1].index, 1);
  EXPECT_EQ(split.slots[2].source, SlotSource::kAttr);
  EXPECT_EQ(split.slots[2].index, 0);
  EXPECT_EQ(split.slots[3].index, 1);
  EXPECT_EQ(default_arg(split.slots[3]), Arg(false));
  // TransformLayout interleaves inputs and attrs in its Python order.
  const InstructionSignature& layout = instruction_signature(InstructionKind::TransformLayout);
  EXPECT_EQ(layout.slots[3].name, "index_map");
  EXPECT_EQ(layout.slots[3].source, SlotSource::kInput);
  EXPECT_EQ(layout.slots[3].index, 1);
  EXPECT_EQ(layout.slots[4].index, 2);
  EXPECT_TRUE(default_arg(layout.slots[4]).is_none());
  EXPECT_EQ(default_arg(instruction_signature(InstructionKind::GetBlock).slots[1]), Arg("main"));
}

TEST(InstructionSignature, PrimitivesRecordTheDeclaredLayout) {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  ExprRV v = sch.sample_categorical({2, 4}, {0.5, 0.5}, int64_t{1});
  sch.split(loops[0], {None{}, v});
  sch.annotate(c, "k", 1.5);
  BlockRV cache = sch.cache_write(c, 0, "local");
  const Trace& t = sch.trace();
  ASSERT_EQ(t.size(), 6u);
  // Split: the loop, then the factors flattened into the inputs; two bool attrs.
  EXPECT_EQ(t[3].inputs, (std::vector<Arg>{loops[0], None{}, v}));
  EXPECT_EQ(t[3].attrs, (std::vector<Arg>{true, false}));
  EXPECT_EQ(t[4].inputs, (std::vector<Arg>{c, 1.5}));
  EXPECT_EQ(t[4].attrs, (std::vector<Arg>{"k"}));
  // CacheWrite: an empty consumer list as the second input.
  EXPECT_EQ(t[5].inputs, (std::vector<Arg>{c, Arg::List{}}));
  EXPECT_EQ(t[5].attrs, (std::vector<Arg>{int64_t{0}, "local"}));
  EXPECT_EQ(t[5].outputs, (std::vector<RandomVar>{cache}));
}

TEST(InstructionSignature, ReplayChecksCountsAndTypesNamingTheKind) {
  struct Bad {
    Instruction inst;
    std::string message;
  };
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  LoopRV l = sch.get_loops(c)[0];
  const std::vector<Bad> cases = {
      {{InstructionKind::Parallel, {l, l}, {}, {}}, "Parallel: expected 1 inputs, got 2"},
      {{InstructionKind::Split, {}, {true, false}, {}}, "Split: expected at least 1 inputs, got 0"},
      {{InstructionKind::Fuse, {l}, {}, {}}, "Fuse: expected 1 attrs, got 0"},
      {{InstructionKind::Parallel, {c}, {}, {}}, "Parallel: expected a loop, got b0"},
      {{InstructionKind::Bind, {l}, {int64_t{3}}, {}}, "Bind: expected a string, got 3"},
      {{InstructionKind::Split, {l, "x"}, {true, false}, {}}, "Split: expected an expression, got \"x\""},
      {{InstructionKind::SampleCategorical, {}, {int64_t{1}, Arg::List{}}, {}},
       "SampleCategorical: expected a list for candidates, got 1"},
      {{InstructionKind::Split, {l, int64_t{2}}, {true, true}, {}}, "Split: disable_predication=true is not supported"},
  };
  for (const Bad& b : cases) {
    try {
      apply_instruction(sch, b.inst, std::nullopt);
      ADD_FAILURE() << "replayed " << to_string(b.inst);
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << to_string(b.inst) << " -> " << e.what();
    }
  }
}

TEST(InstructionSignature, OlderTvmLayoutsReplayAsThePinnedOnes) {
  // Split with one attr and bools as 0/1 (TVM v0.12-0.16), CacheWrite without consumers
  // (before v0.14), TransformLayout with its map as an attr (before v0.12).
  const std::string older =
      R"x([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)x"
      R"x(["Split",["l1","None",4],[1],["l4","l5"]],)x"
      R"x(["CacheWrite",["b0"],[0,"local"],["b6"]],)x"
      R"x(["TransformLayout",["b6"],[0,0,"lambda i, j: (j, i)"],[]]],[]])x";
  const std::string pinned =
      R"x([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)x"
      R"x(["Split",["l1","None",4],[true,false],["l4","l5"]],)x"
      R"x(["CacheWrite",["b0",[]],[0,"local"],["b6"]],)x"
      R"x(["TransformLayout",["b6","\"lambda i, j: (j, i)\""],[0,0,null,false],[]]],[]])x";
  const ir::PrimFunc func = workload("matmul:m=16,n=16,k=16");
  Schedule a = replay(trace_from_json(older), func);
  Schedule b = replay(trace_from_json(pinned), func);
  EXPECT_TRUE(ir::structural_equal(a.func(), b.func()));
  EXPECT_EQ(trace_to_json(a.trace()), pinned);  // replay records the pinned layout
  const Trace t = trace_from_json(older);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(in_pinned_dialect(t[i]), trace_from_json(pinned)[i]) << i;
  }
}

}  // namespace
}  // namespace dragon::schedule
