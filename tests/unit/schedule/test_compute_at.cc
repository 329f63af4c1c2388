// compute_at: the regenerated loops cover the region the consumers read per iteration
// (conv2d padding, softmax stages, split elementwise chains, a cached matmul operand),
// semantic preservation on the interpreter, each precondition's error, replay; gathers
// (indirect reads) are covered by their declared range or refused.
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

constexpr const char* kConv = "conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1";

TEST(ComputeAt, ConvPaddingAtTheOutputRowLoop) {
  Schedule sch(workload(kConv));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
  std::vector<LoopRV> pad_loops = sch.get_loops(sch.get_block("X_pad"));
  sch.compute_at(sch.get_block("X_pad"), loops[2]);
  std::string text = ir::print_function(sch.func());
  // Three padded rows (a 3x3 kernel) of every channel per output row.
  EXPECT_TRUE(has_line(text, "for ax1 in 2 {")) << text;
  EXPECT_TRUE(has_line(text, "for ax2 in 3 {")) << text;
  EXPECT_TRUE(has_line(text, "for ax3 in 8 {")) << text;
  EXPECT_TRUE(has_line(text, "block X_pad [vi0: S 1 = 0, vi1: S 2 = ax1, vi2: S 8 = i2 + ax2, vi3: S 8 = ax3]"))
      << text;
  EXPECT_FALSE(has_line(text, "if (")) << text;
  EXPECT_FALSE(sch.is_valid(pad_loops[0]));
  EXPECT_TRUE(sch.is_valid(loops[2]));
  EXPECT_EQ(sch.get_loops(sch.get_block("X_pad")).size(), 7u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeAt, ConvPaddingAtTheChannelAndReduceLoops) {
  for (int at : {1, 4}) {
    Schedule sch(workload(kConv));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
    sch.compute_at(sch.get_block("X_pad"), loops[at], /*preserve_unit_loops=*/false);
    std::string text = ir::print_function(sch.func());
    if (at == 1) {
      // Every output channel reads the whole padded input.
      EXPECT_TRUE(has_line(text, "block X_pad [vi0: S 1 = 0, vi1: S 2 = ax1, vi2: S 8 = ax2, vi3: S 8 = ax3]"))
          << text;
    } else {
      // Under the input-channel loop: one channel, a 3x3 window.
      EXPECT_TRUE(has_line(text, "block X_pad [vi0: S 1 = 0, vi1: S 2 = r0, vi2: S 8 = i2 + ax2, vi3: S 8 = i3 + ax3]"))
          << text;
      EXPECT_TRUE(has_line(text, "for ax3 in 3 {")) << text;
    }
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(ComputeAt, MovedAgainToADeeperLoop) {
  Schedule sch(workload(kConv));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
  BlockRV pad = sch.get_block("X_pad");
  sch.compute_at(pad, loops[1]);
  sch.compute_at(pad, loops[3]);
  std::string text = ir::print_function(sch.func());
  // The names of the nest that left are free again.
  EXPECT_TRUE(has_line(text, "vi2: S 8 = i2 + ax2, vi3: S 8 = i3 + ax3]")) << text;
  EXPECT_EQ(sch.get_child_blocks(loops[1]).size(), 2u);
  EXPECT_EQ(sch.get_child_blocks(loops[3]).size(), 2u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeAt, StridedConvPaddingAtTheOutputRowLoop) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=2,size=7x7,kernel=3x3,stride=2x2,padding=1x1"));
  LoopRV row = sch.get_loops(sch.get_block("Y"))[2];
  sch.compute_at(sch.get_block("X_pad"), row);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax2 in 3 {")) << text;
  EXPECT_TRUE(has_line(text, "vi2: S 9 = i2 * 2 + ax2")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

constexpr const char* kChain2d = R"(func chain2d(in A: f32[4, 6], out C: f32[4, 6]) {
  block root {
    alloc B: f32[4, 6]
    for i0 in 4 {
      for i1 in 6 {
        block B [vi0: S 4 = i0, vi1: S 6 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = A[vi0, vi1] * 2f32
        }
      }
    }
    for i0 in 4 {
      for i1 in 6 {
        block C [vi0: S 4 = i0, vi1: S 6 = i1] {
          reads B[vi0, vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = B[vi0, vi1] + 1f32
        }
      }
    }
  }
}
)";

TEST(ComputeAt, FusedAndSplitConsumerCoversRowsOfTheTile) {
  Schedule sch(ir::parse_function(kChain2d));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  std::vector<LoopRV> parts = sch.split(fused, {None{}, int64_t{5}});
  sch.compute_at(sch.get_block("B"), parts[0]);
  std::string text = ir::print_function(sch.func());
  // A tile of 5 of the 24 elements spans at most 2 rows: the rows it does not span, and
  // the row past the last, are skipped.
  EXPECT_TRUE(has_line(text, "for ax0 in 2 {")) << text;
  EXPECT_TRUE(has_line(text, "for ax1 in 6 {")) << text;
  EXPECT_TRUE(has_line(text, "if (")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeAt, SoftmaxStagesAtTheRowLoopOfTheNormalisation) {
  Schedule sch(workload("softmax:shape=4x16"));
  LoopRV row = sch.get_loops(sch.get_block("softmax"))[0];
  // x_exp is read by exp_sum too: exp_sum moves first, then x_exp goes before it.
  sch.compute_at(sch.get_block("exp_sum"), row);
  sch.compute_at(sch.get_block("x_exp"), row);
  sch.compute_at(sch.get_block("x_max"), row, /*preserve_unit_loops=*/false);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block x_max [vi0: S 4 = i0, vr0: R 16 = ax1_2]")) << text;
  EXPECT_TRUE(has_line(text, "block x_exp [vi0: S 4 = i0, vi1: S 16 = ax1_1]")) << text;
  EXPECT_TRUE(has_line(text, "block exp_sum [vi0: S 4 = i0, vr0: R 16 = ax1]")) << text;
  EXPECT_TRUE(has_line(text, "for ax0 in 1 {")) << text;  // exp_sum and x_exp keep theirs
  size_t max_at = text.find("block x_max"), exp_at = text.find("block x_exp"), sum_at = text.find("block exp_sum"),
         norm_at = text.find("block softmax");
  EXPECT_LT(max_at, exp_at);
  EXPECT_LT(exp_at, sum_at);
  EXPECT_LT(sum_at, norm_at);
  EXPECT_EQ(sch.get_child_blocks(row).size(), 4u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

constexpr const char* kChain = R"(func chain(in A: f32[10], out C: f32[10]) {
  block root {
    alloc B: f32[10]
    for i0 in 10 {
      block B [vi0: S 10 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] * 2f32
      }
    }
    for i0 in 10 {
      block C [vi0: S 10 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0] + 1f32
      }
    }
  }
}
)";

TEST(ComputeAt, ElementwiseChainAfterANonDivisibleSplit) {
  Schedule sch(ir::parse_function(kChain));
  LoopRV loop = sch.get_loops(sch.get_block("C"))[0];
  std::vector<LoopRV> parts = sch.split(loop, {None{}, int64_t{4}});
  sch.compute_at(sch.get_block("B"), parts[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax0 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "block B [vi0: S 10 = i0_0 * 4 + ax0]")) << text;
  // The last tile would run past the producer's domain: guarded.
  EXPECT_TRUE(has_line(text, "if (i0_0 * 4 + ax0 < 10)")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));

  // At the inner loop: one element, the unit loop kept or dropped.
  for (bool preserve : {true, false}) {
    Schedule inner(ir::parse_function(kChain));
    std::vector<LoopRV> p = inner.split(inner.get_loops(inner.get_block("C"))[0], {None{}, int64_t{4}});
    inner.compute_at(inner.get_block("B"), p[1], preserve);
    std::string t = ir::print_function(inner.func());
    EXPECT_EQ(has_line(t, "for ax0 in 1 {"), preserve) << t;
    EXPECT_TRUE(has_line(t, "block B [vi0: S 10 = i0_0 * 4 + i0_1]")) << t;
    EXPECT_TRUE(same_outputs(inner.original(), inner.func()));
    EXPECT_TRUE(replays_exactly(inner));
  }
}

constexpr const char* kCachedMatmul = R"(func mm(in A: f32[8, 8], in B: f32[8, 8], out C: f32[8, 8]) {
  block root {
    alloc A_shared: f32[8, 8]
    for i0 in 8 {
      for i1 in 8 {
        block A_shared [vi0: S 8 = i0, vi1: S 8 = i1] {
          reads A[vi0, vi1]
          writes A_shared[vi0, vi1]
          A_shared[vi0, vi1] = A[vi0, vi1]
        }
      }
    }
    for i0 in 8 {
      for i1 in 8 {
        for r0 in 8 {
          block C [vi0: S 8 = i0, vi1: S 8 = i1, vr0: R 8 = r0] {
            reads A_shared[vi0, vr0], B[vr0, vi1]
            writes C[vi0, vi1]
            init {
              C[vi0, vi1] = 0f32
            }
            C[vi0, vi1] = C[vi0, vi1] + A_shared[vi0, vr0] * B[vr0, vi1]
          }
        }
      }
    }
  }
}
)";

TEST(ComputeAt, CachedMatmulOperandAtTheOuterReductionLoop) {
  Schedule sch(ir::parse_function(kCachedMatmul));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{4}});
  sch.compute_at(sch.get_block("A_shared"), k[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax0 in 1 {")) << text;
  EXPECT_TRUE(has_line(text, "for ax1 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "block A_shared [vi0: S 8 = i0, vi1: S 8 = r0_0 * 4 + ax1]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  // The JSON form TVM writes.
  std::string json = trace_to_json(sch.trace());
  EXPECT_NE(json.find(R"(["ComputeAt",["b6","l4"],[true,-1],[]])"), std::string::npos) << json;
}

// A block read before it is written (T, read by B), a non-affine gather (C reads
// G[i * j]) and a block whose output does not depend on all its spatial variables (H).
constexpr const char* kIrregular = R"(func irregular(in A: f32[4, 4], out C: f32[4, 4], out E: f32[4]) {
  block root {
    alloc B: f32[16]
    alloc T: f32[16]
    alloc G: f32[16]
    alloc H: f32[4]
    for i0 in 16 {
      block B [vi0: S 16 = i0] {
        reads T[vi0]
        writes B[vi0]
        B[vi0] = T[vi0]
      }
    }
    for i0 in 16 {
      block T [vi0: S 16 = i0] {
        reads A[vi0 // 4, vi0 % 4]
        writes T[vi0]
        T[vi0] = A[vi0 // 4, vi0 % 4]
      }
    }
    for i0 in 16 {
      block G [vi0: S 16 = i0] {
        reads A[vi0 % 4, vi0 // 4]
        writes G[vi0]
        G[vi0] = A[vi0 % 4, vi0 // 4]
      }
    }
    for i0 in 4 {
      for i1 in 4 {
        block H [vi0: S 4 = i0, vi1: S 4 = i1] {
          reads A[vi0, vi1]
          writes H[vi0]
          H[vi0] = A[vi0, vi1]
        }
      }
    }
    for i0 in 4 {
      for i1 in 4 {
        block C [vi0: S 4 = i0, vi1: S 4 = i1] {
          reads G[vi0 * vi1], B[vi0 * 4 + vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = G[vi0 * vi1] + B[vi0 * 4 + vi1]
        }
      }
    }
    for i0 in 4 {
      block E [vi0: S 4 = i0] {
        reads C[vi0, 0], H[vi0]
        writes E[vi0]
        E[vi0] = C[vi0, 0] + H[vi0]
      }
    }
  }
}
)";

struct ComputeAtErrorCase {
  std::string name;
  const char* program;  // nullptr: the conv workload
  std::function<void(Schedule&)> apply;
  int precondition;
  std::string error_name;
  std::string operand;
  std::string marked;  // a line of the detail marked "<-- here"
};

TEST(ComputeAt, PreconditionErrors) {
  auto y_loop = [](Schedule& s, int i) { return s.get_loops(s.get_block("Y"))[i]; };
  std::vector<ComputeAtErrorCase> cases = {
      {"root block", nullptr, [&](Schedule& s) { BlockRV b = s.get_block("root"); s.compute_at(b, y_loop(s, 2)); }, 1,
       "NotInSameScope", "loop l4", "for i2 in 6 {  <-- here"},
      {"own loop", nullptr,
       [&](Schedule& s) { BlockRV b = s.get_block("X_pad"); s.compute_at(b, s.get_loops(s.get_block("X_pad"))[1]); }, 2,
       "LoopIsAncestor", "loop l3", "for i1 in 2 {  <-- here"},
      {"incomplete", kIrregular,
       [&](Schedule& s) { BlockRV b = s.get_block("H"); s.compute_at(b, s.get_loops(s.get_block("E"))[0]); }, 3,
       "NotCompleteOrReduction", "block b0", "block H [vi0: S 4 = i0, vi1: S 4 = i1] {  <-- here"},
      {"output block", nullptr,
       [&](Schedule& s) { BlockRV b = s.get_block("Y"); s.compute_at(b, s.get_loops(s.get_block("X_pad"))[0]); }, 4, "OutputBlock",
       "block b0", "vr2: R 3 = r2] {  <-- here"},
      {"consumer outside", "softmax",
       [&](Schedule& s) { BlockRV b = s.get_block("x_exp"); s.compute_at(b, s.get_loops(s.get_block("softmax"))[0]); }, 5,
       "NotAllConsumersUnderLoop", "loop l2", "for i0 in 4 {  <-- here"},
      {"consumer before", kIrregular,
       [&](Schedule& s) { BlockRV b = s.get_block("T"); s.compute_at(b, s.get_loops(s.get_block("B"))[0]); }, 5,
       "NotAllConsumersUnderLoop", "loop l2", "for i0 in 16 {  <-- here"},
      {"producer after", kIrregular,
       [&](Schedule& s) { BlockRV b = s.get_block("B"); s.compute_at(b, s.get_loops(s.get_block("C"))[0]); }, 6,
       "ProducerNotBefore", "block b0", "block B [vi0: S 16 = i0] {  <-- here"},
      {"index", nullptr, [&](Schedule& s) { BlockRV b = s.get_block("X_pad"); s.compute_at(b, y_loop(s, 2), true, 2); }, 7,
       "InvalidIndex", "index 2", "for i2 in 6 {  <-- here"},
      {"gather", kIrregular,
       [&](Schedule& s) { BlockRV b = s.get_block("G"); s.compute_at(b, s.get_loops(s.get_block("C"))[0]); }, 8,
       "NonAffineRegion", "loop l2", "for i0 in 4 {  <-- here"},
  };
  for (const ComputeAtErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    ir::PrimFunc func = c.program == nullptr                     ? workload(kConv)
                        : std::string(c.program) == "softmax" ? workload("softmax:shape=4x16")
                                                                 : ir::parse_function(c.program);
    Schedule sch(func);
    ir::PrimFunc before = sch.func();
    size_t trace_size = 0;
    try {
      // Lookups are recorded; the failing compute_at must add nothing after them.
      Schedule probe = sch.copy();
      c.apply(probe);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::ComputeAt);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
      EXPECT_EQ(e.operand(), c.operand) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.operand), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), c.marked)) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

TEST(ComputeAt, FailureLeavesTheScheduleUnchanged) {
  Schedule sch(workload("softmax:shape=4x16"));
  BlockRV exp = sch.get_block("x_exp");
  LoopRV row = sch.get_loops(sch.get_block("softmax"))[0];
  ir::PrimFunc before = sch.func();
  size_t trace_size = sch.trace().size();
  EXPECT_THROW(sch.compute_at(exp, row), ScheduleError);
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size);
}

TEST(ComputeAt, FirstAndExplicitPositions) {
  Schedule sch(workload("softmax:shape=4x16"));
  LoopRV row = sch.get_loops(sch.get_block("softmax"))[0];
  sch.compute_at(sch.get_block("exp_sum"), row, true, 0);
  sch.compute_at(sch.get_block("x_exp"), row, true, -2);
  std::vector<BlockRV> children = sch.get_child_blocks(row);
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(sch.get(children[0])->name, "x_exp");
  EXPECT_EQ(sch.get(children[1])->name, "exp_sum");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// ---- reverse_compute_at ------------------------------------------------------------

TEST(ReverseComputeAt, ElementwiseChainAfterSplittingTheProducer) {
  Schedule sch(ir::parse_function(kChain));
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("B"))[0], {None{}, int64_t{4}});
  sch.reverse_compute_at(sch.get_block("C"), parts[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax0 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "block C [vi0: S 10 = i0_0 * 4 + ax0]")) << text;
  EXPECT_TRUE(has_line(text, "if (i0_0 * 4 + ax0 < 10)")) << text;
  EXPECT_EQ(sch.get_child_blocks(parts[0]).size(), 2u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  std::string json = trace_to_json(sch.trace());
  EXPECT_NE(json.find(R"(["ReverseComputeAt",["b4","l2"],[true,-1],[]])"), std::string::npos) << json;
}

constexpr const char* kWriteBack = R"(func mm(in A: f32[8, 8], in B: f32[8, 8], out C: f32[8, 8]) {
  block root {
    alloc C_local: f32[8, 8]
    for i0 in 8 {
      for i1 in 8 {
        for r0 in 8 {
          block C_local [vi0: S 8 = i0, vi1: S 8 = i1, vr0: R 8 = r0] {
            reads A[vi0, vr0], B[vr0, vi1]
            writes C_local[vi0, vi1]
            init {
              C_local[vi0, vi1] = 0f32
            }
            C_local[vi0, vi1] = C_local[vi0, vi1] + A[vi0, vr0] * B[vr0, vi1]
          }
        }
      }
    }
    for i0 in 8 {
      for i1 in 8 {
        block C [vi0: S 8 = i0, vi1: S 8 = i1] {
          reads C_local[vi0, vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = C_local[vi0, vi1]
        }
      }
    }
  }
}
)";

TEST(ReverseComputeAt, MatmulWriteBackAtTheTileLoops) {
  for (int at : {0, 1}) {
    Schedule sch(ir::parse_function(kWriteBack));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C_local"));
    sch.reverse_compute_at(sch.get_block("C"), loops[at], /*preserve_unit_loops=*/false);
    std::string text = ir::print_function(sch.func());
    if (at == 0) {
      EXPECT_TRUE(has_line(text, "block C [vi0: S 8 = i0, vi1: S 8 = ax1]")) << text;
      EXPECT_TRUE(has_line(text, "for ax1 in 8 {")) << text;
    } else {
      EXPECT_TRUE(has_line(text, "block C [vi0: S 8 = i0, vi1: S 8 = i1]")) << text;
    }
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(ReverseComputeAt, SoftmaxNormalisationAtTheRowLoopOfTheSum) {
  Schedule sch(workload("softmax:shape=4x16"));
  LoopRV row = sch.get_loops(sch.get_block("exp_sum"))[0];
  sch.reverse_compute_at(sch.get_block("softmax"), row);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block softmax [vi0: S 4 = i0, vi1: S 16 = ax1]")) << text;
  EXPECT_TRUE(has_line(text, "for ax0 in 1 {")) << text;
  EXPECT_TRUE(has_line(text, "for ax1 in 16 {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// A scan's elements are final once written, so a copy of its output may follow each chunk
// of its (ordered) axis; a reduction's chunk loop stays refused (precondition 7, below).
TEST(ReverseComputeAt, AScansCopyAfterEachChunkOfItsAxis) {
  for (const char* spec : {"cumsum:shape=4x16,dim=1", "cumsum:shape=4x16,dim=1,reverse=true",
                           "cumsum:shape=4x16,dim=1,exclusive=true"}) {
    SCOPED_TRACE(spec);
    Schedule sch(workload(spec));
    BlockRV scan = sch.get_block("Y");
    std::vector<LoopRV> chunks = sch.split(sch.get_loops(scan)[1], {None{}, int64_t{4}});
    BlockRV copy = sch.cache_write(scan, 0, "global");
    sch.reverse_compute_at(copy, chunks[0]);
    std::string text = ir::print_function(sch.func());
    EXPECT_TRUE(has_line(text, "for ax1 in 4 {")) << text;
    for (uint64_t seed = 1; seed <= 3; ++seed) EXPECT_TRUE(same_outputs(sch.original(), sch.func(), seed)) << text;
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// D reads Cb under the loop that produces B; H writes at a non-affine index.
constexpr const char* kReverseIrregular = R"(func rev(in A: f32[16], out D: f32[8], out F: f32[16]) {
  block root {
    alloc B: f32[8]
    alloc Cb: f32[8]
    alloc H: f32[16]
    for i0 in 8 {
      block B [vi0: S 8 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
      }
      block D [vi0: S 8 = i0] {
        reads Cb[vi0]
        writes D[vi0]
        D[vi0] = Cb[vi0]
      }
    }
    for i0 in 8 {
      block Cb [vi0: S 8 = i0] {
        reads B[vi0]
        writes Cb[vi0]
        Cb[vi0] = B[vi0]
      }
    }
    for i0 in 4 {
      for i1 in 4 {
        block H [vi0: S 4 = i0, vi1: S 4 = i1] {
          reads A[vi0 * 4 + vi1]
          writes H[vi0 * vi1]
          H[vi0 * vi1] = A[vi0 * 4 + vi1]
        }
      }
    }
    for i0 in 16 {
      block F [vi0: S 16 = i0] {
        reads H[vi0]
        writes F[vi0]
        F[vi0] = H[vi0]
      }
    }
  }
}
)";

TEST(ReverseComputeAt, PreconditionErrors) {
  auto loop_of = [](Schedule& s, const char* name, int i) { return s.get_loops(s.get_block(name))[i]; };
  std::vector<ComputeAtErrorCase> cases = {
      {"root block", "softmax", [&](Schedule& s) { BlockRV b = s.get_block("root"); s.reverse_compute_at(b, loop_of(s, "softmax", 0)); },
       1, "NotInSameScope", "loop l2", "for i0 in 4 {  <-- here"},
      {"own loop", "softmax", [&](Schedule& s) { BlockRV b = s.get_block("softmax"); s.reverse_compute_at(b, loop_of(s, "softmax", 1)); },
       2, "LoopIsAncestor", "loop l3", "for i1 in 16 {  <-- here"},
      {"reduction", "softmax", [&](Schedule& s) { BlockRV b = s.get_block("exp_sum"); s.reverse_compute_at(b, loop_of(s, "x_exp", 0)); },
       3, "NotCompleteBlock", "block b0", "block exp_sum [vi0: S 4 = i0, vr0: R 16 = r0] {  <-- here"},
      {"producer after", "softmax", [&](Schedule& s) { BlockRV b = s.get_block("softmax"); s.reverse_compute_at(b, loop_of(s, "x_exp", 0)); },
       4, "NotAllProducersUnderLoop", "loop l2", "for i0 in 4 {  <-- here"},
      {"producer after block", kIrregular, [&](Schedule& s) { BlockRV b = s.get_block("B"); s.reverse_compute_at(b, loop_of(s, "T", 0)); },
       4, "NotAllProducersUnderLoop", "loop l2", "for i0 in 16 {  <-- here"},
      {"consumer under", kReverseIrregular, [&](Schedule& s) { BlockRV b = s.get_block("Cb"); s.reverse_compute_at(b, loop_of(s, "B", 0)); },
       5, "ConsumerNotAfter", "block b0", "block Cb [vi0: S 8 = i0] {  <-- here"},
      {"index", kChain, [&](Schedule& s) { BlockRV b = s.get_block("C"); s.reverse_compute_at(b, loop_of(s, "B", 0), true, 0); },
       6, "InvalidIndex", "index 0", "for i0 in 10 {  <-- here"},
      {"reduce loop", kWriteBack, [&](Schedule& s) { BlockRV b = s.get_block("C"); s.reverse_compute_at(b, loop_of(s, "C_local", 2)); },
       7, "LoopFeedsReduction", "loop l4", "for r0 in 8 {  <-- here"},
      {"gather", kReverseIrregular, [&](Schedule& s) { BlockRV b = s.get_block("F"); s.reverse_compute_at(b, loop_of(s, "H", 0)); },
       8, "NonAffineRegion", "loop l2", "for i0 in 4 {  <-- here"},
  };
  for (const ComputeAtErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    ir::PrimFunc func = std::string(c.program) == "softmax" ? workload("softmax:shape=4x16") : ir::parse_function(c.program);
    Schedule sch(func);
    Schedule probe = sch.copy();
    try {
      c.apply(probe);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::ReverseComputeAt);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
      EXPECT_EQ(e.operand(), c.operand) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.operand), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), c.marked)) << e.detail();
    }
  }
}

TEST(ReverseComputeAt, FailureLeavesTheScheduleUnchanged) {
  Schedule sch(ir::parse_function(kWriteBack));
  BlockRV c = sch.get_block("C");
  LoopRV r = sch.get_loops(sch.get_block("C_local"))[2];
  ir::PrimFunc before = sch.func();
  size_t trace_size = sch.trace().size();
  EXPECT_THROW(sch.reverse_compute_at(c, r), ScheduleError);
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size);
}

// Indirect reads (gathers). compute_at's region comes from the consumers' declared read
// regions, never from indices it cannot bound: a consumer that reads the producer through
// an index buffer declares the whole range and the producer is recomputed in full at the
// loop; a region declared at a data-dependent index is refused, not guessed.

TEST(ComputeAt, AtAGathersLoopTheProducerCoversTheWholeDeclaredRange) {
  Schedule sch(ir::parse_function(testing::kGatherOfIntermediate));
  sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax0 in 8 {")) << text;  // every row idx may name, the last included
  for (uint64_t seed = 1; seed <= 8; ++seed) EXPECT_TRUE(same_outputs(sch.original(), sch.func(), seed)) << seed;
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeAt, ARegionDeclaredAtADataDependentIndexIsRefused) {
  std::string ir_text = testing::kGatherOfIntermediate;
  ir_text.replace(ir_text.find("B[0 +: 8]"), 9, "B[idx[vi0]]");
  Schedule sch(ir::parse_function(ir_text));
  BlockRV b = sch.get_block("B");
  LoopRV c_loop = sch.get_loops(sch.get_block("C"))[0];
  const size_t trace_size = sch.trace().size();
  try {
    sch.compute_at(b, c_loop);
    ADD_FAILURE() << "compute_at accepted a region it cannot bound:\n" << ir::print_function(sch.func());
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("data-dependent index"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sch.trace().size(), trace_size);
}

// The producer's own gathers (embedding_bag's pooled reads weight[indices[offsets[b] + r]])
// need no cover: its region is its consumer's affine read, one bag's row per row of out.
TEST(ComputeAt, EmbeddingBagPooledAtTheOutputRowLoop) {
  Schedule sch(workload("embedding_bag:num_embeddings=20,embedding_dim=8,batch=6,max_bag_length=4,num_indices=16,mode=mean"));
  sch.compute_at(sch.get_block("pooled"), sch.get_loops(sch.get_block("out"))[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for ax0 in 1 {")) << text;  // one bag
  EXPECT_TRUE(has_line(text, "for ax1 in 8 {")) << text;  // its 8 columns
  for (uint64_t seed = 1; seed <= 4; ++seed) EXPECT_TRUE(same_outputs(sch.original(), sch.func(), seed)) << seed;
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
