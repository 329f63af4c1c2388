// compute_inline and reverse_compute_inline: the IR after, semantic preservation on the
// interpreter (conv2d padding, softmax and layer_norm stages, matmul epilogues, a gather),
// replay, and each precondition's error.
#include <gtest/gtest.h>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using testing::marks;

TEST(ComputeInline, PaddingIntoConv2d) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  sch.compute_inline(sch.get_block("X_pad"));
  std::string text = ir::print_function(sch.func());
  EXPECT_FALSE(has_line(text, "alloc X_pad")) << text;
  EXPECT_FALSE(has_line(text, "block X_pad")) << text;
  EXPECT_TRUE(has_line(text, "select(vi2 + vr1 >= 1")) << text;
  EXPECT_TRUE(has_line(text, "reads X[")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeInline, SoftmaxExpIntoBothReaders) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.compute_inline(sch.get_block("x_exp"));
  std::string text = ir::print_function(sch.func());
  EXPECT_FALSE(has_line(text, "alloc x_exp")) << text;
  EXPECT_TRUE(has_line(text, "exp_sum[vi0] = exp_sum[vi0] + exp(X[vi0, vr0] - x_max[vi0])")) << text;
  EXPECT_TRUE(has_line(text, "softmax[vi0, vi1] = exp(X[vi0, vi1] - x_max[vi0]) / exp_sum[vi0]")) << text;
  EXPECT_TRUE(has_line(text, "reads X[vi0, vr0], x_max[vi0]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeInline, LayerNormStagesInOrder) {
  Schedule sch(workload("layer_norm:shape=4x16,normalized_dims=1"));
  sch.compute_inline(sch.get_block("mean"));
  sch.compute_inline(sch.get_block("inv_std"));
  std::string text = ir::print_function(sch.func());
  EXPECT_FALSE(has_line(text, "alloc mean")) << text;
  EXPECT_FALSE(has_line(text, "alloc inv_std")) << text;
  EXPECT_TRUE(has_line(text, "rsqrt(sq_dev_sum[vi0] / 16f32 + 1e-05f32)")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ComputeInline, AfterSplitOfTheProducer) {
  Schedule sch(workload("softmax:shape=4x10"));
  BlockRV exp = sch.get_block("x_exp");
  sch.split(sch.get_loops(exp)[1], {None{}, int64_t{4}});
  sch.compute_inline(exp);
  EXPECT_FALSE(sch.is_valid(exp));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}


TEST(ComputeInline, IntoAGather) {
  Schedule sch(ir::parse_function(testing::kGatherOfIntermediate));
  sch.compute_inline(sch.get_block("B"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "C[vi0] = A[idx[vi0]] * 2f32 + 1f32")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ReverseComputeInline, EpilogueIntoTheCacheWriteBack) {
  // Without cache_write the producer is the reduction: not complete.
  Schedule sch(workload("matmul_bias_act:m=8,n=8,k=8,activation=relu"));
  try {
    sch.reverse_compute_inline(sch.get_block("out"));
    ADD_FAILURE() << "expected NonSingleProducer";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4) << e.what();
    EXPECT_EQ(e.error_name(), "NonSingleProducer");
    EXPECT_TRUE(marks(e.detail(), "block matmul [")) << e.detail();
  }
}

// A producer chain whose consumer stores transposed: C[j, i] = B[i, j] + bias[j].
constexpr const char* kTranspose = R"(func tr(in A: f32[4, 6], in bias: f32[6], out C: f32[6, 4]) {
  block root {
    alloc B: f32[4, 6]
    for i0 in 4 {
      for i1 in 6 {
        block B [vi0: S 4 = i0, vi1: S 6 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = exp(A[vi0, vi1])
        }
      }
    }
    for i0 in 4 {
      for i1 in 6 {
        block C [vi0: S 4 = i0, vi1: S 6 = i1] {
          reads B[vi0, vi1], bias[vi1]
          writes C[vi1, vi0]
          C[vi1, vi0] = B[vi0, vi1] + bias[vi1]
        }
      }
    }
  }
}
)";

TEST(ReverseComputeInline, TransposedStoreWithABias) {
  Schedule sch(ir::parse_function(kTranspose));
  sch.reverse_compute_inline(sch.get_block("C"));
  std::string text = ir::print_function(sch.func());
  EXPECT_FALSE(has_line(text, "alloc B")) << text;
  EXPECT_TRUE(has_line(text, "C[vi1, vi0] = exp(A[vi0, vi1]) + bias[vi1]")) << text;
  EXPECT_TRUE(has_line(text, "writes C[vi1, vi0]")) << text;
  EXPECT_TRUE(has_line(text, "block B [")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ReverseComputeInline, SoftmaxDivisionIntoExp) {
  // softmax reads x_exp (produced) and exp_sum (produced): two produced buffers.
  Schedule sch(workload("softmax:shape=4x8"));
  try {
    sch.reverse_compute_inline(sch.get_block("softmax"));
    ADD_FAILURE() << "expected NonSingleProducer";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4) << e.what();
  }
}

struct InlineCase {
  std::string spec;
  std::string block;
  int precondition;
  std::string error_name;
  std::string marked;
};

TEST(ComputeInline, PreconditionErrors) {
  std::vector<InlineCase> cases = {
      {"softmax:shape=4x8", "softmax", 2, "OutputBlock", "block softmax ["},
      {"softmax:shape=4x8", "x_max", 3, "NotCompleteBlock", "block x_max ["},
      {"matmul:m=4,n=4,k=4", "root", 1, "NotSingleWriteBlock", "block root {"},
  };
  for (const InlineCase& c : cases) {
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    ir::PrimFunc before = sch.func();
    size_t trace_size = sch.trace().size();
    try {
      sch.compute_inline(b);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::ComputeInline);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name);
      EXPECT_EQ(e.operand(), "block b0");
      EXPECT_NE(std::string(e.what()).find("block b0"), std::string::npos) << e.what();
      EXPECT_TRUE(marks(e.detail(), c.marked)) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

constexpr const char* kTwoStores = R"(func two(in A: f32[4], out C: f32[4]) {
  block root {
    alloc B: f32[4]
    for i0 in 4 {
      block B [vi0: S 4 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
        B[vi0] = B[vi0] + 1f32
      }
    }
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0]
      }
    }
  }
}
)";

constexpr const char* kOnlyLeaf = R"(func leaf(in A: f32[4], out C: f32[4]) {
  block root {
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads A[vi0]
        writes C[vi0]
        block D {
          alloc B: f32[4]
          for j in 4 {
            block B [vj: S 4 = j] {
              reads A[vj]
              writes B[vj]
              B[vj] = A[vj]
            }
          }
        }
        C[vi0] = A[vi0]
      }
    }
  }
}
)";

constexpr const char* kShifted = R"(func shifted(in A: f32[4, 4], out C: f32[4]) {
  block root {
    alloc B: f32[4]
    for i0 in 4 {
      for i1 in 4 {
        block B [vi0: S 4 = i0, vi1: S 4 = i1] {
          reads A[vi0, vi1]
          writes B[vi0]
          B[vi0] = A[vi0, vi1]
        }
      }
    }
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0]
      }
    }
  }
}
)";

constexpr const char* kOverwritten = R"(func over(inout A: f32[4], out C: f32[4]) {
  block root {
    alloc B: f32[4]
    for i0 in 4 {
      block B [vi0: S 4 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
      }
    }
    for i0 in 4 {
      block W [vi0: S 4 = i0] {
        writes A[vi0]
        A[vi0] = 0f32
      }
    }
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0]
      }
    }
  }
}
)";

TEST(ComputeInline, BodyShapeAndSafetyErrors) {
  struct Case {
    const char* text;
    int precondition;
    std::string error_name;
  };
  for (const Case& c : {Case{kTwoStores, 4, "BodyAnalysisError"}, Case{kShifted, 4, "BodyAnalysisError"},
                        Case{kOverwritten, 7, "ValueOverwritten"}}) {
    Schedule sch(ir::parse_function(c.text));
    ir::PrimFunc before = sch.func();
    try {
      sch.compute_inline(sch.get_block("B"));
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
    }
    EXPECT_TRUE(sch.func().same_as(before));
  }
}

TEST(ComputeInline, OnlyLeafOfItsScope) {
  // The fixture must parse: a parse error fails the test instead of hiding it.
  ir::PrimFunc func;
  ASSERT_NO_THROW(func = ir::parse_function(kOnlyLeaf));
  Schedule sch(func);
  try {
    sch.compute_inline(sch.get_block("B"));
    ADD_FAILURE() << "expected OnlyLeafError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 5) << e.what();
    EXPECT_EQ(e.error_name(), "OnlyLeafError");
  }
}

TEST(ComputeInline, InlinedBlockRandomVariableIsInvalidated) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV b = sch.get_block("x_exp");
  sch.compute_inline(b);
  try {
    sch.compute_inline(b);
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 0);
    EXPECT_NE(std::string(e.what()).find("ComputeInline"), std::string::npos) << e.what();
  }
}

TEST(ReverseComputeInline, PreconditionErrors) {
  struct Case {
    std::string spec;
    std::string block;
    int precondition;
    std::string error_name;
  };
  for (const Case& c : {Case{"softmax:shape=4x8", "x_max", 2, "NotCompleteBlock"},
                        Case{"softmax:shape=4x8", "x_exp", 4, "NonSingleProducer"},
                        Case{"matmul:m=4,n=4,k=4", "root", 1, "NotSingleWriteBlock"},
                        Case{"layer_norm:shape=4x16,normalized_dims=1", "inv_std", 4, "NonSingleProducer"}}) {
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    ir::PrimFunc before = sch.func();
    size_t trace_size = sch.trace().size();
    try {
      sch.reverse_compute_inline(b);
      ADD_FAILURE() << "expected " << c.error_name << " for " << c.block;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::ReverseComputeInline);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
      EXPECT_EQ(e.operand(), "block b0");
      EXPECT_TRUE(has_line(e.detail(), "<-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

// Shapes for the remaining preconditions: a producer P of B (8 elements) and consumers.
std::string chain(const std::string& middle, const std::string& consumer) {
  return R"(func chain(in A: f32[8], in D: f32[8], out C: f32[8], out E: f32[8]) {
  block root {
    alloc B: f32[8]
    for i0 in 8 {
      block P [vi0: S 8 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] + 1f32
      }
    }
)" + middle + consumer + R"(  }
}
)";
}

const std::string kConsumer = R"(    for i0 in 8 {
      block C [vi0: S 8 = i0] {
        reads B[vi0], D[vi0]
        writes C[vi0]
        C[vi0] = B[vi0] * D[vi0]
      }
    }
)";
const std::string kWritesE = R"(    for i0 in 8 {
      block M [vi0: S 8 = i0] {
        reads A[vi0]
        writes E[vi0]
        E[vi0] = A[vi0]
      }
    }
)";

TEST(ReverseComputeInline, ChainSucceedsWithAnUnrelatedBlockBetween) {
  Schedule sch(ir::parse_function(chain(kWritesE, kConsumer)));
  sch.reverse_compute_inline(sch.get_block("C"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "C[vi0] = (A[vi0] + 1f32) * D[vi0]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ReverseComputeInline, MorePreconditionErrors) {
  struct Case {
    std::string text;
    int precondition;
    std::string error_name;
  };
  const std::string reads_b = R"(    for i0 in 8 {
      block M [vi0: S 8 = i0] {
        reads B[vi0]
        writes E[vi0]
        E[vi0] = B[vi0]
      }
    }
)";
  const std::string writes_d = R"(    for i0 in 8 {
      block M [vi0: S 8 = i0] {
        reads A[vi0]
        writes E[vi0]
        E[vi0] = A[vi0]
      }
    }
    for i0 in 8 {
      block W [vi0: S 8 = i0] {
        reads E[vi0]
        writes C[vi0]
        C[vi0] = E[vi0]
      }
    }
)";
  const std::string half = R"(    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads B[vi0], D[vi0]
        writes C[vi0]
        C[vi0] = B[vi0] * D[vi0]
      }
    }
)";
  const std::string reads_c = R"(    for i0 in 8 {
      block M [vi0: S 8 = i0] {
        reads C[vi0]
        writes E[vi0]
        E[vi0] = C[vi0]
      }
    }
)";
  for (const Case& c : {Case{chain(kWritesE, half), 5, "BodyAnalysisError"},
                        Case{chain(reads_b, kConsumer), 6, "ProducerHasOtherConsumers"},
                        Case{chain(writes_d, kConsumer), 2, "NotCompleteBlock"},
                        Case{chain(reads_c, kConsumer), 7, "UnsafeToMove"}}) {
    ir::PrimFunc func;
    try {
      func = ir::parse_function(c.text);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\n" << c.text;
      continue;
    }
    Schedule sch(func);
    ir::PrimFunc before = sch.func();
    try {
      sch.reverse_compute_inline(sch.get_block("C"));
      ADD_FAILURE() << "expected " << c.error_name << " in\n" << c.text;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
    }
    EXPECT_TRUE(sch.func().same_as(before));
  }
}

// After blockize the producer P sits in a block P_o whose write region names B. Inlining
// C into P would drop B's allocation and leave P_o's region naming it (ill-formed IR);
// the check accepted this (the constrained decoder found it: bz then rci on a cache
// read). P_o is another block that accesses B: refused, check and apply alike. Likewise
// with the consumer blockized (C_o reads B).
TEST(ReverseComputeInline, ProducerOrConsumerInsideABlockizedBlock) {
  for (const char* blockized : {"P", "C"}) {
    SCOPED_TRACE(blockized);
    Schedule sch(ir::parse_function(chain(kWritesE, kConsumer)));
    const BlockRV c = sch.get_block("C");
    sch.blockize(sch.get_loops(sch.get_block(blockized))[0]);
    const std::string outer = std::string(blockized) + "_o";
    const CheckResult checked = sch.check(Instruction{InstructionKind::ReverseComputeInline, {Arg(c)}, {}, {}});
    EXPECT_EQ(checked.verdict, Verdict::kFails);
    testing::expect_refusal(
        InstructionKind::ReverseComputeInline, sch, [&] { sch.reverse_compute_inline(c); },
        {6, "ProducerHasOtherConsumers", "block b0"}, "block " + outer + " [",
        "block '" + outer + "', which holds other blocks,");
  }
  // compute_inline of P refuses both shapes too (P the only leaf of P_o; C_o reads B).
  for (const char* blockized : {"P", "C"}) {
    Schedule sch(ir::parse_function(chain(kWritesE, kConsumer)));
    const BlockRV p = sch.get_block("P");
    sch.blockize(sch.get_loops(sch.get_block(blockized))[0]);
    const CheckResult checked = sch.check(Instruction{InstructionKind::ComputeInline, {Arg(p)}, {}, {}});
    EXPECT_EQ(checked.verdict, Verdict::kFails) << blockized;
    EXPECT_THROW(sch.compute_inline(p), ScheduleError) << blockized;
  }
}

TEST(ComputeInline, ReaderBeforeTheProducer) {
  const std::string before_reader = R"(func early(in A: f32[8], out C: f32[8], out E: f32[8]) {
  block root {
    alloc B: f32[8]
    for i0 in 8 {
      block R [vi0: S 8 = i0] {
        reads B[vi0]
        writes E[vi0]
        E[vi0] = B[vi0]
      }
    }
    for i0 in 8 {
      block P [vi0: S 8 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] + 1f32
      }
    }
    for i0 in 8 {
      block C [vi0: S 8 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0]
      }
    }
  }
}
)";
  Schedule sch(ir::parse_function(before_reader));
  try {
    sch.compute_inline(sch.get_block("P"));
    ADD_FAILURE() << "expected UnsupportedConsumer";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 6) << e.what();
    EXPECT_EQ(e.error_name(), "UnsupportedConsumer");
    EXPECT_TRUE(marks(e.detail(), "block R [")) << e.detail();
  }
}

}  // namespace
}  // namespace dragon::schedule
