// The supervised fine-tuning data: one JSON object per line (docs/model.md, "SFT data"),
// each a workload spec, how its prompt is rendered, an optional existing script
// (refinement) and the target script; and their token sequences under the tokenizer with
// where the target starts. Not the batching (src/model/training.h) and not the data set
// builder (the data component).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/data/prompt.h"
#include "dragon/script/tokenizer.h"

namespace dragon::model {

enum class TaskKind : uint8_t { kConstruction, kRefinement };
// How the workload becomes the prompt: its canonical IR text, or the op spec string
// (data/prompt.h renders both, for the data set and the model alike).
using PromptForm = data::PromptForm;

struct SftRecord {
  TaskKind task = TaskKind::kConstruction;
  PromptForm prompt = PromptForm::kIr;
  std::string workload;                        // op spec, "softmax:shape=16x1024"
  std::optional<std::string> existing_script;  // refinement only: the script to improve
  std::string script;                          // the target, canonical
  friend bool operator==(const SftRecord&, const SftRecord&) = default;
};

// One record as its JSON line (without the newline).
std::string to_json_line(const SftRecord& record);
// Parses one line; throws UserError "ORIGIN:LINE: why" for malformed JSON, a missing or
// unknown field value, a refinement without its existing script (or a construction with
// one) and a script that is not canonical (script::is_canonical).
SftRecord parse_sft_record(std::string_view line, std::string_view origin, int line_number);
// Every non-blank line of a JSONL file.
std::vector<SftRecord> read_sft_records(const std::string& path);

// What a trainer reads from its data folder, by split.
struct SftSplits {
  std::vector<SftRecord> train;
  std::vector<SftRecord> validation;
  std::string source;  // where they came from, for the trainer's first line
};
// A data set that `dragon data build` wrote (DIR/manifest.json present): every shard the
// manifest lists, read as it is (zstd JSON lines, docs/data-set.md); lines of split "train"
// train, "validation" validate, and "held_out" (whole model families kept for evaluation)
// are never read; their prompts take `data_set_prompt` (a data set stores specs, from which
// either form is rebuilt). Otherwise plain JSONL: DIR/train.jsonl (required) and
// DIR/valid.jsonl (optional), each line with its own prompt form. Throws UserError naming
// the folder, shard or line that is wrong.
SftSplits read_sft_splits(const std::string& data_dir, PromptForm data_set_prompt = PromptForm::kIr);

// The prompt form every record has, if they share one: what a model trained on them reads,
// stored in its files (metadata "prompt") so that sampling frames prompts the same way.
std::optional<PromptForm> shared_prompt_form(const std::vector<SftRecord>& records);

// The tokenizer's example of a record: the prompt built from the workload (the ops
// registry's function printed, or the spec), the existing script, the target.
script::Example to_example(const SftRecord& record);

// The tokens of a prompt exactly as training frames it (to_example's, without a target):
// what the model reads before it writes a script, in `dragon optimize` and in RL.
std::vector<script::TokenId> encode_prompt(const script::Tokenizer& tokenizer, PromptForm prompt,
                                           const std::string& workload,
                                           const std::optional<std::string>& existing_script);

// An example's tokens ([BOS, PROMPT, ..., SCRIPT, script..., EOS]) and the index of its
// first script token: the loss is taken on tokens[script_start..] only.
struct TokenizedExample {
  std::vector<script::TokenId> tokens;
  size_t script_start = 0;
};
TokenizedExample tokenize(const script::Tokenizer& tokenizer, const script::Example& example);

}  // namespace dragon::model
