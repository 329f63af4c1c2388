// The data set's lines feed the SFT trainer as they are: model::parse_sft_record accepts
// every example line (the extra fields included), reads back its task, workload and
// scripts, and the trainer's token sequence of it (model::to_example, model::tokenize) has
// exactly the length the manifest's token statistics counted (data::tokenizer_example).
// The trainer's folder may be a data set as `dragon data build` wrote it: its shards are
// read by split, held-out lines never.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/data/example.h"
#include "dragon/data/manifest.h"
#include "dragon/model/sft_data.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::data {
namespace {

TEST(SftCompatibility, TheTrainerReadsExampleLinesAndCountsTheSameTokens) {
  const std::string spec = "matmul:m=32,n=32,k=32";
  const db::Workload w = db::testing::workload_of_spec(spec);
  const std::vector<std::string> scripts = db::testing::random_scripts(w, 3, 5);
  Example construction;
  construction.kind = ExampleKind::kConstruction;
  construction.spec = spec;
  construction.hash = w.hash;
  construction.family = "file";
  construction.script = scripts[1];
  construction.target_latency = Latency{0.5, db::LatencySummary::Interval{0.45, 0.55}, 30};
  construction.prompt_latency = Latency{2.0, std::nullopt, 5};
  Example refinement = construction;
  refinement.kind = ExampleKind::kRefinement;
  refinement.split = Split::kValidation;
  refinement.existing_script = scripts[2];
  refinement.prompt_latency = Latency{1.0, db::LatencySummary::Interval{0.9, 1.1}, 30};

  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  for (const Example& e : {construction, refinement}) {
    const std::string line = to_json_line(e);
    model::SftRecord r = model::parse_sft_record(line, "shard-0-of-1.jsonl.zst", 1);
    EXPECT_EQ(r.task, e.kind == ExampleKind::kConstruction ? model::TaskKind::kConstruction
                                                            : model::TaskKind::kRefinement);
    EXPECT_EQ(r.prompt, model::PromptForm::kIr);
    EXPECT_EQ(r.workload, e.spec);
    EXPECT_EQ(r.existing_script, e.existing_script);
    EXPECT_EQ(r.script, e.script);
    const script::Example ours = tokenizer_example(e, prompt_text(e.spec));
    EXPECT_EQ(model::to_example(r), ours) << "the prompt the trainer builds is the one counted";
    EXPECT_EQ(model::tokenize(tokenizer, model::to_example(r)).tokens.size(), tokenizer.encode_example(ours).size());
  }
}

// Examples of `spec` for each split: a construction and a refinement each.
std::vector<Example> examples_of(const std::string& spec, uint64_t seed) {
  const db::Workload w = db::testing::workload_of_spec(spec);
  const std::vector<std::string> scripts = db::testing::random_scripts(w, 3, seed);
  std::vector<Example> out;
  for (Split split : {Split::kTrain, Split::kValidation, Split::kHeldOut}) {
    Example c;
    c.spec = spec;
    c.hash = w.hash;
    c.family = "file";
    c.split = split;
    c.script = scripts[1];
    c.target_latency = Latency{0.5, db::LatencySummary::Interval{0.45, 0.55}, 30};
    Example r = c;
    r.kind = ExampleKind::kRefinement;
    r.existing_script = scripts[2];
    r.prompt_latency = Latency{1.0, db::LatencySummary::Interval{0.9, 1.1}, 30};
    out.push_back(c);
    out.push_back(r);
  }
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SftCompatibility, TheTrainerReadsADataSetFolderBySplitAndNeverTheHeldOut) {
  db::testing::TempDir dir;
  const std::string set = dir.file("set");
  std::filesystem::create_directories(set);
  // Two shards, as two runs of `dragon data build --shard K/2` leave them.
  std::vector<Example> all;
  for (int64_t index = 0; index < 2; ++index) {
    const std::vector<Example> shard =
        examples_of(index == 0 ? "matmul:m=32,n=32,k=32" : "softmax:shape=16x256", 7 + index);
    std::vector<std::string> lines;
    for (const Example& e : shard) lines.push_back(to_json_line(e));
    support::write_compressed_jsonl(set + "/" + shard_file_name(index, 2), lines);
    ShardSummary summary;
    summary.index = index;
    summary.count = 2;
    summary.corpus = "file";
    summary.target = {"cpu", "x86-64"};
    summary.hardware = {"test cpu", ""};
    write_shard_summary(set, summary);
    all.insert(all.end(), shard.begin(), shard.end());
  }
  rebuild_manifest(set);

  const model::SftSplits splits = model::read_sft_splits(set);
  auto expected = [&](Split split) {
    std::vector<model::SftRecord> out;
    for (const Example& e : all) {
      if (e.split == split) out.push_back(model::parse_sft_record(to_json_line(e), "expected", 1));
    }
    return out;
  };
  EXPECT_EQ(splits.train, expected(Split::kTrain));
  EXPECT_EQ(splits.validation, expected(Split::kValidation));
  EXPECT_EQ(splits.train.size(), 4u);
  EXPECT_NE(splits.source.find("4 held-out examples not read"), std::string::npos) << splits.source;
  EXPECT_EQ(model::shared_prompt_form(splits.train), model::PromptForm::kIr);
  // The trainer may frame a data set's workloads as op specs instead (far shorter prompts):
  // the same records but their form.
  const model::SftSplits as_specs = model::read_sft_splits(set, model::PromptForm::kSpec);
  ASSERT_EQ(as_specs.train.size(), splits.train.size());
  for (size_t i = 0; i < splits.train.size(); ++i) {
    model::SftRecord expected_record = splits.train[i];
    expected_record.prompt = model::PromptForm::kSpec;
    EXPECT_EQ(as_specs.train[i], expected_record);
  }
  EXPECT_EQ(model::shared_prompt_form(as_specs.train), model::PromptForm::kSpec);
  std::vector<model::SftRecord> mixed = splits.train;
  mixed.push_back(as_specs.train.front());
  EXPECT_EQ(model::shared_prompt_form(mixed), std::nullopt) << "mixed forms: no form to store";

  // A damaged line is named by shard and line.
  std::vector<std::string> lines = support::read_compressed_jsonl(set + "/" + shard_file_name(1, 2));
  lines[2] = R"({"task":"construction"})";
  support::write_compressed_jsonl(set + "/" + shard_file_name(1, 2), lines);
  const std::string damaged = message_of([&] { model::read_sft_splits(set); });
  EXPECT_EQ(damaged.rfind(set + "/" + shard_file_name(1, 2) + ":3: ", 0), 0u) << damaged;

  // A folder of plain JSONL still trains; a folder with neither is refused, by name.
  const std::string plain = dir.file("plain");
  std::filesystem::create_directories(plain);
  EXPECT_NE(message_of([&] { model::read_sft_splits(plain); }).find("neither a data set's manifest.json nor train.jsonl"),
            std::string::npos);
  std::ofstream(plain + "/train.jsonl") << model::to_json_line(expected(Split::kTrain)[1]) << "\n";
  const model::SftSplits from_plain = model::read_sft_splits(plain);
  ASSERT_EQ(from_plain.train.size(), 1u);
  EXPECT_EQ(from_plain.train[0], expected(Split::kTrain)[1]);
  EXPECT_TRUE(from_plain.validation.empty());
  EXPECT_NE(message_of([&] { model::read_sft_splits(dir.file("nowhere")); }).find("not a folder"), std::string::npos);
}

}  // namespace
}  // namespace dragon::data
