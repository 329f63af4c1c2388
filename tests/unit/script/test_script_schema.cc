// The script schema covers every instruction kind with the layout its primitive records,
// its lexical helpers, the neutral token count, TVM's Python form, and the table of kinds
// in docs/script-format.md (generated from the schema).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "dragon/ops/op_registry.h"
#include "dragon/script/lexical_tokens.h"
#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"
#include "dragon/script/trace_python.h"
#include "unit/schedule/gemm_sketch.h"

namespace dragon::script {
namespace {

using schedule::InstructionKind;

TEST(ScriptSchema, EveryKindHasOneRowAndAUniqueMnemonic) {
  std::set<std::string_view> mnemonics;
  ASSERT_EQ(all_kind_schemas().size(), static_cast<size_t>(schedule::kNumInstructionKinds));
  for (int k = 0; k < schedule::kNumInstructionKinds; ++k) {
    const KindSchema& s = kind_schema(static_cast<InstructionKind>(k));
    EXPECT_EQ(static_cast<int>(s.kind), k);
    EXPECT_TRUE(mnemonics.insert(s.mnemonic).second) << s.mnemonic;
    EXPECT_EQ(find_mnemonic(s.mnemonic), &s);
  }
  EXPECT_EQ(find_mnemonic("split"), nullptr);
}

TEST(ScriptSchema, LayoutsMatchWhatPrimitivesRecord) {
  // Split: loop, then the flattened factors; two attrs; one loop per factor.
  const KindSchema& split = kind_schema(InstructionKind::Split);
  EXPECT_EQ(split.mnemonic, "sp");
  ASSERT_EQ(split.slots.size(), 4u);
  EXPECT_EQ(split.slots[1].shape, SlotShape::kRest);
  EXPECT_EQ(split.slots[1].source, SlotSource::kInputsFrom);
  EXPECT_EQ(split.outputs.rule, OutputRule::kListLength);
  // Lookups whose count depends on the IR write it.
  for (auto k : {InstructionKind::GetLoops, InstructionKind::GetChildBlocks, InstructionKind::GetProducers,
                 InstructionKind::GetConsumers}) {
    EXPECT_EQ(kind_schema(k).outputs.rule, OutputRule::kWritten) << kind_schema(k).mnemonic;
  }
  const KindSchema& tile = kind_schema(InstructionKind::SamplePerfectTile);
  EXPECT_EQ(tile.decision, DecisionShape::kIntList);
  EXPECT_EQ(tile.slots[static_cast<size_t>(tile.decision_length_slot)].name, "n");
  EXPECT_EQ(kind_schema(InstructionKind::SampleCategorical).decision, DecisionShape::kInt);
  EXPECT_EQ(kind_schema(InstructionKind::Bind).slots[1].names.size(), 9u);
  // Every schema row decodes its own minimal line: required slots only.
  EXPECT_NO_THROW(decode("gb C\ngl b0 2\nsa b0 0 1 32 8\ntz b0 mma_f16\nscl b0 = -1\ntl b0 0 1 \"lambda i: (i,)\"\n"));
}

// The doc's table is the generated one: a new or changed kind shows in the docs.
TEST(ScriptSchema, KindsTableOfTheDocsIsTheGeneratedOne) {
  std::ifstream in(DRAGON_SOURCE_DIR "/docs/script-format.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string header = "| kind | mnemonic |";
  const size_t start = doc.find(header);
  ASSERT_NE(start, std::string::npos) << "docs/script-format.md has no table of kinds";
  size_t end = start;
  while (end < doc.size() && doc[end] == '|') end = doc.find('\n', end) + 1;
  EXPECT_EQ(doc.substr(start, end - start), kinds_markdown_table())
      << "docs/script-format.md's table of kinds differs from the schema: replace it with the output of "
         "`dragon script kinds`";
  // Every kind is a row.
  EXPECT_NE(kinds_markdown_table().find("| Split | `sp` | loop:l, factors:(int/v/None)*, "
                                        "preserve_unit_iters:bool=true, disable_predication:bool=false | "
                                        "one l per factors | |"),
            std::string::npos)
      << kinds_markdown_table();
}

TEST(ScriptSchema, BareWordsAndVariableNames) {
  EXPECT_TRUE(is_bare_word("T_matmul_NT"));
  EXPECT_TRUE(is_bare_word("meta_schedule.tiling_structure"));
  EXPECT_TRUE(is_bare_word("b0x"));
  EXPECT_FALSE(is_bare_word("b0"));
  EXPECT_FALSE(is_bare_word("l012"));
  EXPECT_FALSE(is_bare_word("None"));
  EXPECT_FALSE(is_bare_word("true"));
  EXPECT_FALSE(is_bare_word("0abc"));
  EXPECT_FALSE(is_bare_word("a b"));
  EXPECT_FALSE(is_bare_word(""));
  EXPECT_EQ(parse_rv_name("v12"), (std::pair{schedule::RVType::kExpr, int64_t{12}}));
  EXPECT_EQ(parse_rv_name("b01"), std::nullopt);
  EXPECT_EQ(parse_rv_name("x1"), std::nullopt);
}

TEST(ScriptSchema, StringsAreQuotedByOneRule) {
  schedule::Trace t;
  auto block = [&](std::string name) {
    schedule::Instruction inst{InstructionKind::GetBlock, {}, {name, std::string("main")},
                               {schedule::RandomVar{schedule::RVType::kBlock, static_cast<int64_t>(t.size())}}};
    t.append(inst);
  };
  for (const char* s : {"C", "b0", "two words", "q\"\\", "tab\t", "bell\x07", "", "tx"}) block(s);
  EXPECT_EQ(encode(t), "gb C\ngb \"b0\"\ngb \"two words\"\ngb \"q\\\"\\\\\"\ngb \"tab\\t\"\ngb \"bell\\x07\"\ngb \"\"\ngb tx\n");
}

TEST(LexicalTokens, LettersDigitsAndSymbols) {
  EXPECT_EQ(count_lexical_tokens("l10 = sch.fuse(l3, l4)"), 13u);
  EXPECT_EQ(count_lexical_tokens("sp l0 v0 v1\n"), 7u);
  EXPECT_EQ(count_lexical_tokens(R"(["Fuse",["l10","l20"],[true],["l31"]])"), 28u);
  EXPECT_EQ(count_lexical_tokens("  \n\t "), 0u);
  std::vector<std::string_view> t = lexical_tokens("0.25e-05ab");
  EXPECT_EQ(t, (std::vector<std::string_view>{"0", ".", "25", "e", "-", "05", "ab"}));
}

TEST(TracePython, WritesTvmCalls) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload("matmul:m=64,n=64,k=64").func);
  schedule::testing::apply_gemm_sketch(sch);
  std::string py = trace_to_python(sch.trace());
  EXPECT_NE(py.find("b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"), std::string::npos) << py;
  EXPECT_NE(py.find("l2, l3, l4 = sch.get_loops(block=b0)\n"), std::string::npos) << py;
  EXPECT_NE(py.find("v5, v6, v7, v8, v9 = sch.sample_perfect_tile(loop=l2, n=5, max_innermost_factor=64, "
                    "decision=[2, 1, 8, 2, 2])\n"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("l31 = sch.fuse(l10, l20, preserve_unit_iters=True)\n"), std::string::npos) << py;
  EXPECT_NE(py.find("sch.bind(loop=l31, thread_axis=\"blockIdx.x\")\n"), std::string::npos) << py;
  EXPECT_NE(py.find("b35 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"shared\", "
                    "consumer_blocks=[b0])\n"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("v43 = sch.sample_categorical(candidates=[1, 2, 3, 4], probs=[0.25, 0.25, 0.25, 0.25], "
                    "decision=1)\n"),
            std::string::npos)
      << py;
}

}  // namespace
}  // namespace dragon::script
