// Shard summaries and the manifest: their JSON, and the manifest rebuilt from the
// summaries present.
#include "dragon/data/manifest.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::data {
namespace {

using Json = nlohmann::ordered_json;

Json counts_json(const KindCounts& c) { return Json{{"construction", c.construction}, {"refinement", c.refinement}}; }

Json summary_json(const ShardSummary& s) {
  Json j;
  j["format"] = std::string(kDataSetFormat);
  j["shard"] = s.index;
  j["shard_count"] = s.count;
  j["file"] = s.file_name();
  j["partial"] = s.partial;
  j["corpus"] = s.corpus;
  j["target"] = {{"name", s.target.name}, {"arch", s.target.arch}};
  j["hardware"] = {{"device", s.hardware.device}, {"driver", s.hardware.driver}};
  j["commit"] = s.commit;
  j["built_at"] = s.built_at;
  j["trials_per_workload"] = s.trials_per_workload;
  j["tokenizer"] = s.tokenizer;
  j["mining"] = {{"min_ratio", s.mining.min_ratio},
                 {"max_ratio", s.mining.max_ratio},
                 {"refinements_per_workload", s.mining.refinements_per_workload}};
  j["workloads"] = {{"in_shard", s.workloads},        {"tuned", s.tuned},
                    {"with_examples", s.with_examples}, {"default_best", s.default_best},
                    {"no_ok_record", s.no_ok_record}};
  j["refinement_prompts"] = {{"in_ratio_range", s.refinements_in_range}, {"significant", s.refinements_significant}};
  Json by_split = Json::object();
  for (const auto& [split, counts] : s.examples) by_split[std::string(split_id(split))] = counts_json(counts);
  j["examples"] = {{"total", s.example_count()}, {"by_split", by_split}};
  j["tokens"] = {{"total", s.tokens.total}, {"mean", s.tokens.mean()}, {"max", s.tokens.max}};
  return j;
}

// Reads a summary object, failing with "SOURCE: why".
ShardSummary summary_of(const nlohmann::json& j, const std::string& source) {
  auto fail = [&](const std::string& why) { return UserError(fmt::format("{}: {}", source, why)); };
  try {
    if (!j.is_object()) throw fail("expected a JSON object");
    if (j.value("format", std::string()) != kDataSetFormat) {
      throw fail(fmt::format("format '{}' is not {}", j.value("format", std::string()), kDataSetFormat));
    }
    ShardSummary s;
    s.index = j.at("shard").get<int64_t>();
    s.count = j.at("shard_count").get<int64_t>();
    if (s.count < 1 || s.index < 0 || s.index >= s.count) throw fail(fmt::format("shard {} of {}", s.index, s.count));
    s.partial = j.at("partial").get<bool>();
    s.corpus = j.at("corpus").get<std::string>();
    s.target = {j.at("target").at("name").get<std::string>(), j.at("target").at("arch").get<std::string>()};
    s.hardware = {j.at("hardware").at("device").get<std::string>(), j.at("hardware").at("driver").get<std::string>()};
    s.commit = j.at("commit").get<std::string>();
    s.built_at = j.at("built_at").get<std::string>();
    s.trials_per_workload = j.at("trials_per_workload").get<int64_t>();
    s.tokenizer = j.at("tokenizer").get<std::string>();
    const nlohmann::json& m = j.at("mining");
    s.mining = {m.at("min_ratio").get<double>(), m.at("max_ratio").get<double>(),
                m.at("refinements_per_workload").get<int>()};
    const nlohmann::json& w = j.at("workloads");
    s.workloads = w.at("in_shard").get<int64_t>();
    s.tuned = w.at("tuned").get<int64_t>();
    s.with_examples = w.at("with_examples").get<int64_t>();
    s.default_best = w.at("default_best").get<int64_t>();
    s.no_ok_record = w.at("no_ok_record").get<int64_t>();
    s.refinements_in_range = j.at("refinement_prompts").at("in_ratio_range").get<int64_t>();
    s.refinements_significant = j.at("refinement_prompts").at("significant").get<int64_t>();
    for (const auto& [id, counts] : j.at("examples").at("by_split").items()) {
      std::optional<Split> split = parse_split(id);
      if (!split) throw fail(fmt::format("unknown split '{}'", id));
      s.examples[*split] = {counts.at("construction").get<int64_t>(), counts.at("refinement").get<int64_t>()};
    }
    if (j.at("examples").at("total").get<int64_t>() != s.example_count()) {
      throw fail("examples.total is not the sum of examples.by_split");
    }
    s.tokens.examples = s.example_count();
    s.tokens.total = j.at("tokens").at("total").get<int64_t>();
    s.tokens.max = j.at("tokens").at("max").get<int64_t>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("malformed ({})", e.what()));
  }
}

nlohmann::json parse_json_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
}

void add_counts(ShardSummary& total, const ShardSummary& s) {
  total.trials_per_workload = std::max(total.trials_per_workload, s.trials_per_workload);
  total.workloads += s.workloads;
  total.tuned += s.tuned;
  total.with_examples += s.with_examples;
  total.default_best += s.default_best;
  total.no_ok_record += s.no_ok_record;
  total.refinements_in_range += s.refinements_in_range;
  total.refinements_significant += s.refinements_significant;
  for (const auto& [split, c] : s.examples) {
    total.examples[split].construction += c.construction;
    total.examples[split].refinement += c.refinement;
  }
  total.tokens.examples += s.tokens.examples;
  total.tokens.total += s.tokens.total;
  total.tokens.max = std::max(total.tokens.max, s.tokens.max);
}

}  // namespace

void TokenStatistics::add(int64_t tokens) {
  ++examples;
  total += tokens;
  max = std::max(max, tokens);
}

int64_t ShardSummary::example_count() const { return by_kind().total(); }

KindCounts ShardSummary::by_kind() const {
  KindCounts total;
  for (const auto& [split, c] : examples) {
    total.construction += c.construction;
    total.refinement += c.refinement;
  }
  return total;
}

std::string ShardSummary::file_name() const { return shard_file_name(index, count); }

ShardSummary Manifest::totals() const {
  ShardSummary total;
  total.corpus = corpus;
  total.target = target;
  total.hardware = hardware;
  for (const ShardSummary& s : shards) add_counts(total, s);
  return total;
}

std::string shard_file_name(int64_t index, int64_t count) { return fmt::format("shard-{}-of-{}.jsonl.zst", index, count); }
std::string summary_file_name(int64_t index, int64_t count) {
  return fmt::format("shard-{}-of-{}.summary.json", index, count);
}

void write_shard_summary(const std::string& dir, const ShardSummary& summary) {
  write_text_file((std::filesystem::path(dir) / summary_file_name(summary.index, summary.count)).string(),
                  summary_json(summary).dump(2) + "\n");
}

Manifest rebuild_manifest(const std::string& dir) {
  static const std::regex summary_name(R"(shard-(\d+)-of-(\d+)\.summary\.json)");
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (std::regex_match(entry.path().filename().string(), summary_name)) paths.push_back(entry.path().string());
  }
  if (error) throw UserError(fmt::format("cannot list {}: {}", dir, error.message()));
  std::sort(paths.begin(), paths.end());

  Manifest manifest;
  for (const std::string& path : paths) {
    ShardSummary s = summary_of(parse_json_file(path), path);
    const std::string expected = summary_file_name(s.index, s.count);
    if (std::filesystem::path(path).filename() != expected) {
      throw UserError(fmt::format("{}: describes shard {} of {} (its file would be {})", path, s.index, s.count, expected));
    }
    if (manifest.shards.empty()) {
      manifest.corpus = s.corpus;
      manifest.target = s.target;
      manifest.hardware = s.hardware;
      manifest.shard_count = s.count;
    } else if (s.corpus != manifest.corpus || s.target != manifest.target || s.hardware != manifest.hardware ||
               s.count != manifest.shard_count) {
      throw UserError(fmt::format(
          "{}: shard of corpus '{}', {}, {}, {} shards; the others in {} are of corpus '{}', {}, {}, {} shards "
          "(one directory holds one data set)",
          path, s.corpus, s.target.describe(), s.hardware.describe(), s.count, dir, manifest.corpus,
          manifest.target.describe(), manifest.hardware.describe(), manifest.shard_count));
    }
    manifest.shards.push_back(std::move(s));
  }
  std::sort(manifest.shards.begin(), manifest.shards.end(),
            [](const ShardSummary& a, const ShardSummary& b) { return a.index < b.index; });

  Json j;
  j["format"] = std::string(kDataSetFormat);
  j["corpus"] = manifest.corpus;
  j["target"] = {{"name", manifest.target.name}, {"arch", manifest.target.arch}};
  j["hardware"] = {{"device", manifest.hardware.device}, {"driver", manifest.hardware.driver}};
  j["shard_count"] = manifest.shard_count;
  Json totals = summary_json(manifest.totals());
  j["totals"] = {{"shards_present", manifest.shards.size()},
                 {"shards_partial", std::count_if(manifest.shards.begin(), manifest.shards.end(),
                                                  [](const ShardSummary& s) { return s.partial; })},
                 {"workloads", totals["workloads"]},
                 {"refinement_prompts", totals["refinement_prompts"]},
                 {"examples", totals["examples"]},
                 {"tokens", totals["tokens"]}};
  Json shards = Json::array();
  for (const ShardSummary& s : manifest.shards) shards.push_back(summary_json(s));
  j["shards"] = shards;
  write_text_file((std::filesystem::path(dir) / "manifest.json").string(), j.dump(2) + "\n");
  return manifest;
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "manifest.json").string();
  if (!std::filesystem::exists(path)) throw UserError(fmt::format("{}: no manifest (not a data set directory?)", path));
  const nlohmann::json j = parse_json_file(path);
  try {
    if (j.value("format", std::string()) != kDataSetFormat) {
      throw UserError(fmt::format("{}: format '{}' is not {}", path, j.value("format", std::string()), kDataSetFormat));
    }
    Manifest manifest;
    manifest.corpus = j.at("corpus").get<std::string>();
    manifest.target = {j.at("target").at("name").get<std::string>(), j.at("target").at("arch").get<std::string>()};
    manifest.hardware = {j.at("hardware").at("device").get<std::string>(),
                         j.at("hardware").at("driver").get<std::string>()};
    manifest.shard_count = j.at("shard_count").get<int64_t>();
    for (const nlohmann::json& s : j.at("shards")) {
      manifest.shards.push_back(summary_of(s, path));
    }
    return manifest;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: malformed ({})", path, e.what()));
  }
}

std::string describe(const Manifest& manifest) {
  const ShardSummary t = manifest.totals();
  std::string out = fmt::format("corpus {}  target {}  hardware {}\n", manifest.corpus, manifest.target.describe(),
                                manifest.hardware.describe());
  out += fmt::format("shards: {} of {} present\n", manifest.shards.size(), manifest.shard_count);
  for (const ShardSummary& s : manifest.shards) {
    out += fmt::format("  {:<28} {:>6} workloads {:>6} tuned {:>7} examples ({} construction, {} refinement){}  {} {}\n",
                       s.file_name(), s.workloads, s.tuned, s.example_count(), s.by_kind().construction,
                       s.by_kind().refinement,
                       s.partial ? "  PARTIAL" : "", s.commit.substr(0, 12), s.built_at);
  }
  out += fmt::format("workloads: {} in the shards present, {} tuned, {} with examples, {} default best, {} nothing ok\n",
                     t.workloads, t.tuned, t.with_examples, t.default_best, t.no_ok_record);
  out += fmt::format("refinement prompts: {} in the ratio range, {} significantly slower\n", t.refinements_in_range,
                     t.refinements_significant);
  out += fmt::format("examples: {}\n", t.example_count());
  for (const auto& [split, c] : t.examples) {
    out += fmt::format("  {:<11} {:>7} construction {:>7} refinement\n", split_id(split), c.construction, c.refinement);
  }
  out += fmt::format("tokens ({}): {} in all, {:.1f} per example, at most {}\n",
                     manifest.shards.empty() ? "-" : manifest.shards.front().tokenizer, t.tokens.total,
                     t.tokens.mean(), t.tokens.max);
  return out;
}

}  // namespace dragon::data
