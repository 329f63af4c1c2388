// The compact script round-trips: decode(encode(t)) == t for random traces of the
// primitives over every op kind, random well-typed traces of every kind from the schema,
// the GEMM sketch of tests/unit/schedule/test_gemm_trace.cc and every expert script;
// encode(decode(s)) == s for their scripts; a decoded trace replays to the same function.
#include <gtest/gtest.h>

#include <set>

#include "dragon/ir/structural_equal.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/index_map.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "random_traces.h"
#include "unit/schedule/gemm_sketch.h"

namespace dragon::script {
namespace {

using schedule::Trace;

// The round trip in both directions, with the text in the failure message.
::testing::AssertionResult round_trips(const Trace& trace) {
  std::string script = encode(trace);
  Trace decoded;
  try {
    decoded = decode(script);
  } catch (const UserError& e) {
    return ::testing::AssertionFailure() << "decode failed: " << e.what() << "\n" << script;
  }
  if (!(decoded == trace)) {
    return ::testing::AssertionFailure() << "decode(encode(t)) != t\nscript:\n"
                                         << script << "original:\n"
                                         << trace.to_string() << "decoded:\n"
                                         << decoded.to_string();
  }
  std::string again = encode(decoded);
  if (again != script) return ::testing::AssertionFailure() << "encode(decode(s)) != s\n" << script << "vs\n" << again;
  if (!is_canonical(script)) return ::testing::AssertionFailure() << "not canonical:\n" << script;
  // The JSON form of the decoded trace is the original's, byte for byte (same dependencies).
  if (schedule::trace_to_json(decoded) != schedule::trace_to_json(trace)) {
    return ::testing::AssertionFailure() << "JSON differs after the round trip\n" << script;
  }
  return ::testing::AssertionSuccess();
}

TEST(ScriptRoundTrip, GemmSketchIsTheDocumentedScript) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload("matmul:m=64,n=64,k=64").func);
  schedule::testing::apply_gemm_sketch(sch);
  sch.enter_postproc();
  const Trace& trace = sch.trace();
  ASSERT_TRUE(round_trips(trace));
  // The literal the schedule tests pin (also data/scripts/expert/gemm_sketch.json).
  Trace from_json = schedule::trace_from_json(read_text_file(std::string(DRAGON_SOURCE_DIR) +
                                                             "/data/scripts/expert/gemm_sketch.json"));
  EXPECT_TRUE(from_json == trace);
  const std::string script = encode(trace);
  EXPECT_EQ(script, read_text_file(std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gemm_sketch.script"));
  // Lines the format's rules fix: implicit outputs, decisions inline, short names,
  // written lookup counts, omitted defaults (preserve_unit_iters, index -1, uniform probs).
  EXPECT_NE(script.find("gb C\ngb root\nann b0 tiling SSSRRSRS\ngl b0 3\nspt l0 5 64 = 2 1 8 2 2\nsp l0 v0 v1 v2 v3 v4\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("bind l16 bx\n"), std::string::npos) << script;
  EXPECT_NE(script.find("cr b0 0 shared b0\nca b3 l13\n"), std::string::npos) << script;
  EXPECT_NE(script.find("sc [1 2 3 4] = 1\nann b3 coop v13\n"), std::string::npos) << script;
  EXPECT_TRUE(script.ends_with("post\n")) << script;
}

TEST(ScriptRoundTrip, RandomPrimitiveTracesOverEveryOpKind) {
  const std::vector<ops::OpKind>& kinds = ops::OpRegistry::global().kinds();
  const int kTraces = 1000;
  const int per_kind = (kTraces + static_cast<int>(kinds.size()) - 1) / static_cast<int>(kinds.size());
  int checked = 0;
  size_t instructions = 0;
  std::set<schedule::InstructionKind> seen;
  for (const ops::OpKind& op : kinds) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    for (int i = 0; i < per_kind; ++i) {
      Trace trace = testing::schedule_trace(func, 1000 * checked + 17, 6);
      ASSERT_TRUE(round_trips(trace)) << op.name << " trace " << i;
      for (const auto& inst : trace.instructions()) seen.insert(inst.kind);
      instructions += trace.size();
      ++checked;
    }
  }
  EXPECT_GE(checked, kTraces);
  EXPECT_GE(instructions, static_cast<size_t>(kTraces) * 6);
  // The generator reaches the primitives with decisions, lists, counts and defaults.
  for (auto kind : {schedule::InstructionKind::Split, schedule::InstructionKind::SamplePerfectTile,
                    schedule::InstructionKind::SampleCategorical, schedule::InstructionKind::CacheRead,
                    schedule::InstructionKind::ComputeAt, schedule::InstructionKind::Fuse,
                    schedule::InstructionKind::Annotate, schedule::InstructionKind::EnterPostproc}) {
    EXPECT_TRUE(seen.count(kind)) << schedule::instruction_kind_name(kind);
  }
}

TEST(ScriptRoundTrip, RandomSchemaTracesOfEveryKind) {
  std::set<schedule::InstructionKind> seen;
  for (int64_t seed = 1; seed <= 1000; ++seed) {
    Trace trace = testing::schema_trace(seed, 25);
    ASSERT_TRUE(round_trips(trace)) << "seed " << seed;
    for (const auto& inst : trace.instructions()) seen.insert(inst.kind);
  }
  EXPECT_EQ(seen.size(), all_kind_schemas().size());
}

TEST(ScriptRoundTrip, DecodedTracesReplayToTheSameFunction) {
  int replayed = 0;
  for (const char* spec : {"matmul:m=16,n=12,k=8", "softmax:shape=4x32", "layer_norm:shape=2x4x16", "conv2d",
                           "sum", "embedding_bag"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    for (int64_t seed = 1; seed <= 8; ++seed) {
      schedule::Trace trace = testing::schedule_trace(func, seed, 8);
      schedule::Schedule first = schedule::replay(trace, func);
      schedule::Schedule second = schedule::replay(decode(encode(trace)), func);
      EXPECT_TRUE(ir::structural_equal(first.func(), second.func())) << spec << " seed " << seed;
      ++replayed;
    }
  }
  EXPECT_EQ(replayed, 48);
}

// conv2d presented as a GEMM (reindexed operands laid out by the block's fusion map): the
// script spells ReIndex and TransformBlockLayout by their mnemonics and replays to the
// same function.
TEST(ScriptRoundTrip, ImplicitGemmTraceReplays) {
  using Type = schedule::Schedule::BufferIndexType;
  using schedule::IndexMap;
  ir::PrimFunc func = ops::OpRegistry::global()
                          .make_workload("conv2d:batch=2,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1")
                          .func;
  schedule::Schedule sch(func);
  schedule::BlockRV y = sch.get_block("Y");
  schedule::BlockRV x = sch.reindex(y, 0, Type::kRead);
  schedule::BlockRV w = sch.reindex(y, 1, Type::kRead);
  schedule::BlockRV out = sch.reindex(y, 0, Type::kWrite);
  sch.transform_layout(x, 0, Type::kWrite, IndexMap::parse("lambda n, h, w, c, r, s: (n * 36 + h * 6 + w, c * 9 + r * 3 + s)"));
  sch.transform_layout(w, 0, Type::kWrite, IndexMap::parse("lambda o, c, r, s: (o, c * 9 + r * 3 + s)"));
  sch.transform_layout(out, 0, Type::kRead, IndexMap::parse("lambda n, o, h, w: (n * 36 + h * 6 + w, o)"));
  sch.transform_block_layout(y, IndexMap::parse("lambda n, o, h, w, c, r, s: (n * 36 + h * 6 + w, o, c * 9 + r * 3 + s)"));
  ASSERT_TRUE(round_trips(sch.trace()));
  const std::string script = encode(sch.trace());
  EXPECT_NE(script.find("ri b0 0 0"), std::string::npos) << script;
  EXPECT_NE(script.find("tbl b0 "), std::string::npos) << script;
  schedule::Schedule again = schedule::replay(decode(script), func);
  EXPECT_TRUE(ir::structural_equal(again.func(), sch.func()));
}

// A GEMM padded to whole tensor-core tiles: the script spells PadEinsum's paddings as a
// bracketed list and replays to the same function.
TEST(ScriptRoundTrip, PadEinsumTraceReplays) {
  using Type = schedule::Schedule::BufferIndexType;
  ir::PrimFunc func = ops::OpRegistry::global().make_workload("matmul:m=100,n=60,k=27,dtype=f16").func;
  schedule::Schedule sch(func);
  schedule::BlockRV c = sch.get_block("C_acc");  // its f32 output is an intermediate already
  sch.reindex(c, 0, Type::kRead);
  sch.reindex(c, 1, Type::kRead);
  sch.pad_einsum(c, {16, 8, 16});
  ASSERT_TRUE(round_trips(sch.trace()));
  const std::string script = encode(sch.trace());
  EXPECT_NE(script.find("pe b0 [16 8 16]"), std::string::npos) << script;
  schedule::Schedule again = schedule::replay(decode(script), func);
  EXPECT_TRUE(ir::structural_equal(again.func(), sch.func()));
  EXPECT_FALSE(ir::structural_equal(again.func(), func));
}

TEST(ScriptRoundTrip, LegacyLayoutsAreRewrittenToThePinnedDialect) {
  // TVM v0.16 Split (one attr, bool as 0/1) and v0.13 CacheWrite (no consumer list).
  Trace legacy = schedule::trace_from_json(
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Split",["l1","None",4],[1],["l4","l5"]],["CacheWrite",["b0"],[0,"local"],["b6"]]],[]])");
  EXPECT_EQ(encode(legacy), "gb C\ngl b0 3\nsp l0 None 4\ncw b0 0 local\n");
  Trace pinned = decode(encode(legacy));
  EXPECT_EQ(pinned[2].attrs, (std::vector<schedule::Arg>{true, false}));
  EXPECT_EQ(pinned[3].inputs.size(), 2u);
}

}  // namespace
}  // namespace dragon::script
