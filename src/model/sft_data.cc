// Reading SFT records from JSONL and turning them into token sequences. No libtorch here.
#include "dragon/model/sft_data.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "dragon/data/data_set_reader.h"
#include "dragon/data/prompt.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/support/text_lines.h"

namespace dragon::model {

std::string to_json_line(const SftRecord& record) {
  nlohmann::ordered_json j;
  j["task"] = record.task == TaskKind::kConstruction ? "construction" : "refinement";
  j["prompt"] = data::prompt_form_name(record.prompt);
  j["workload"] = record.workload;
  if (record.existing_script) j["existing_script"] = *record.existing_script;
  j["script"] = record.script;
  return j.dump();
}

SftRecord parse_sft_record(std::string_view line, std::string_view origin, int line_number) {
  auto fail = [&](std::string_view why) { return UserError(fmt::format("{}:{}: {}", origin, line_number, why)); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("not JSON ({})", e.what()));
  }
  if (!j.is_object()) throw fail("expected a JSON object");
  auto text = [&](const char* key) -> std::optional<std::string> {
    if (!j.contains(key)) return std::nullopt;
    if (!j[key].is_string()) throw fail(fmt::format("'{}' is not a string", key));
    return j[key].get<std::string>();
  };
  auto required = [&](const char* key) {
    std::optional<std::string> value = text(key);
    if (!value) throw fail(fmt::format("missing '{}'", key));
    return *value;
  };
  SftRecord r;
  const std::string task = required("task");
  if (task == "construction") r.task = TaskKind::kConstruction;
  else if (task == "refinement") r.task = TaskKind::kRefinement;
  else throw fail(fmt::format("task '{}' is neither 'construction' nor 'refinement'", task));
  r.prompt = data::parse_prompt_form(text("prompt").value_or("ir"), fmt::format("{}:{}", origin, line_number));
  r.workload = required("workload");
  r.existing_script = text("existing_script");
  r.script = required("script");
  if (r.task == TaskKind::kRefinement && !r.existing_script) throw fail("a refinement needs 'existing_script'");
  if (r.task == TaskKind::kConstruction && r.existing_script) throw fail("a construction has no 'existing_script'");
  // The constrained decoder only ever lets the model write canonical scripts; a target
  // in another spelling would teach what can never be sampled.
  if (!script::is_canonical(r.script)) throw fail("'script' is not a canonical script (script::is_canonical)");
  if (r.existing_script && !script::is_canonical(*r.existing_script))
    throw fail("'existing_script' is not a canonical script");
  return r;
}

std::vector<SftRecord> read_sft_records(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<SftRecord> records;
  for_each_nonblank_line(text, [&](std::string_view line, int number) {
    records.push_back(parse_sft_record(line, path, number));
  });
  return records;
}

namespace {

// The SFT fields of a data-set example (its line is a superset of the SFT line).
SftRecord sft_record_of(data::Example example, PromptForm prompt, std::string_view origin, int line_number) {
  if (!script::is_canonical(example.script))
    throw UserError(fmt::format("{}:{}: 'script' is not a canonical script (script::is_canonical)", origin, line_number));
  SftRecord r;
  r.task = example.kind == data::ExampleKind::kConstruction ? TaskKind::kConstruction : TaskKind::kRefinement;
  r.prompt = prompt;
  r.workload = std::move(example.spec);
  r.existing_script = std::move(example.existing_script);
  r.script = std::move(example.script);
  return r;
}

SftSplits read_data_set(const std::filesystem::path& dir, PromptForm prompt) {
  data::DataSetContents contents = data::read_data_set(dir.string());
  SftSplits out;
  int64_t held_out = 0;
  for (data::LocatedExample& e : contents.examples) {
    switch (e.example.split) {
      case data::Split::kTrain: out.train.push_back(sft_record_of(std::move(e.example), prompt, e.file, e.line)); break;
      case data::Split::kValidation:
        out.validation.push_back(sft_record_of(std::move(e.example), prompt, e.file, e.line));
        break;
      case data::Split::kHeldOut: ++held_out; break;
    }
  }
  const data::Manifest& manifest = contents.manifest;
  out.source = fmt::format("data set {} ({} of {} shards, corpus {}; {} held-out examples not read)", dir.string(),
                           manifest.shards.size(), manifest.shard_count, manifest.corpus, held_out);
  return out;
}

}  // namespace

SftSplits read_sft_splits(const std::string& data_dir, PromptForm data_set_prompt) {
  namespace fs = std::filesystem;
  const fs::path dir(data_dir);
  if (!fs::is_directory(dir)) throw UserError(fmt::format("{}: not a folder of training data", data_dir));
  if (fs::is_regular_file(dir / "manifest.json")) return read_data_set(dir, data_set_prompt);
  const fs::path train = dir / "train.jsonl";
  const fs::path valid = dir / "valid.jsonl";
  if (!fs::is_regular_file(train))
    throw UserError(fmt::format("{}: no training data (neither a data set's manifest.json nor train.jsonl)", data_dir));
  SftSplits out;
  out.train = read_sft_records(train.string());
  if (fs::is_regular_file(valid)) out.validation = read_sft_records(valid.string());
  out.source = train.string();
  return out;
}

std::optional<PromptForm> shared_prompt_form(const std::vector<SftRecord>& records) {
  if (records.empty()) return std::nullopt;
  for (const SftRecord& r : records) {
    if (r.prompt != records.front().prompt) return std::nullopt;
  }
  return records.front().prompt;
}

script::Example to_example(const SftRecord& record) {
  script::Example example;
  example.prompt = data::prompt_text(record.workload, record.prompt);
  example.existing_script = record.existing_script;
  example.script = record.script;
  return example;
}

std::vector<script::TokenId> encode_prompt(const script::Tokenizer& tokenizer, PromptForm prompt,
                                           const std::string& workload,
                                           const std::optional<std::string>& existing_script) {
  SftRecord record;
  record.task = existing_script ? TaskKind::kRefinement : TaskKind::kConstruction;
  record.prompt = prompt;
  record.workload = workload;
  record.existing_script = existing_script;
  script::Example example = to_example(record);
  example.script.reset();
  return tokenizer.encode_example(example);
}

TokenizedExample tokenize(const script::Tokenizer& tokenizer, const script::Example& example) {
  TokenizedExample out;
  out.tokens = tokenizer.encode_example(example);
  const script::TokenId marker = tokenizer.special(script::SpecialToken::kScript);
  for (size_t i = 0; i < out.tokens.size(); ++i) {
    if (out.tokens[i] == marker) {
      out.script_start = i + 1;
      break;
    }
  }
  DRAGON_CHECK(out.script_start > 0, "encode_example wrote no <|script|> marker");
  return out;
}

}  // namespace dragon::model
