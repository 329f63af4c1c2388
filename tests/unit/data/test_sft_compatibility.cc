// The data set's lines feed the SFT trainer as they are: model::parse_sft_record accepts
// every example line (the extra fields included), reads back its task, workload and
// scripts, and the trainer's token sequence of it (model::to_example, model::tokenize) has
// exactly the length the manifest's token statistics counted (data::tokenizer_example).
#include <gtest/gtest.h>

#include "dragon/data/example.h"
#include "dragon/model/sft_data.h"
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

}  // namespace
}  // namespace dragon::data
