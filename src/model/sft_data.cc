// Reading SFT records from JSONL and turning them into token sequences. No libtorch here.
#include "dragon/model/sft_data.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dragon/data/prompt.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::model {

std::string to_json_line(const SftRecord& record) {
  nlohmann::ordered_json j;
  j["task"] = record.task == TaskKind::kConstruction ? "construction" : "refinement";
  j["prompt"] = record.prompt == PromptForm::kIr ? "ir" : "spec";
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
  const std::string prompt = text("prompt").value_or("ir");
  if (prompt == "ir") r.prompt = PromptForm::kIr;
  else if (prompt == "spec") r.prompt = PromptForm::kSpec;
  else throw fail(fmt::format("prompt '{}' is neither 'ir' nor 'spec'", prompt));
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
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    std::string_view line(text.data() + start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos)
      records.push_back(parse_sft_record(line, path, line_number));
    start = end + 1;
  }
  return records;
}

script::Example to_example(const SftRecord& record) {
  script::Example example;
  example.prompt = data::prompt_text(record.workload, record.prompt);
  example.existing_script = record.existing_script;
  example.script = record.script;
  return example;
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
