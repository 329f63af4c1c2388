// The data set's checker (dataset_check.h): recomputes what the manifest claims from the
// shards' lines.
#include "dragon/data/dataset_check.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/data/example.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

// A spec's function, checked once per distinct spec: its hash and its prompt text.
struct BuiltSpec {
  db::WorkloadHash hash = 0;
  std::string prompt;
};

void check_script(const std::string& script, const char* field, const std::string& where) {
  try {
    script::decode(script);
  } catch (const Error& e) {
    throw UserError(fmt::format("{}: '{}' does not decode: {}", where, field, e.what()));
  }
  if (!script::is_canonical(script)) throw UserError(fmt::format("{}: '{}' is not canonical", where, field));
}

// The counts of one shard's lines, compared with its summary.
void compare(const ShardSummary& claimed, const ShardSummary& found) {
  const std::string file = claimed.file_name();
  for (Split split : {Split::kTrain, Split::kValidation, Split::kHeldOut}) {
    auto get = [&](const ShardSummary& s) {
      auto it = s.examples.find(split);
      return it == s.examples.end() ? KindCounts{} : it->second;
    };
    const KindCounts a = get(claimed), b = get(found);
    if (a != b) {
      throw UserError(fmt::format("{}: holds {} construction and {} refinement examples of split {}; the manifest says "
                                  "{} and {}",
                                  file, b.construction, b.refinement, split_id(split), a.construction, a.refinement));
    }
  }
  if (claimed.tokens.total != found.tokens.total || claimed.tokens.max != found.tokens.max) {
    throw UserError(fmt::format("{}: {} tokens in all, at most {} per example; the manifest says {} and {}", file,
                                found.tokens.total, found.tokens.max, claimed.tokens.total, claimed.tokens.max));
  }
  if (claimed.with_examples != found.with_examples) {
    throw UserError(fmt::format("{}: examples of {} workloads; the manifest says {}", file, found.with_examples,
                                claimed.with_examples));
  }
}

}  // namespace

CheckReport check_dataset(const std::string& dir) {
  CheckReport report;
  report.manifest = read_manifest(dir);
  const std::string manifest_path = (std::filesystem::path(dir) / "manifest.json").string();

  // Every shard on disk is in the manifest (else the manifest is stale).
  static const std::regex shard_name(R"(shard-(\d+)-of-(\d+)\.jsonl\.zst)");
  std::set<std::string> listed;
  for (const ShardSummary& s : report.manifest.shards) listed.insert(s.file_name());
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, shard_name) && !listed.count(name)) {
      throw UserError(fmt::format("{}: does not list {}, which is in {} (a stale manifest: rerun dragon data build on "
                                  "that shard, or remove the file)",
                                  manifest_path, name, dir));
    }
  }

  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  std::map<std::string, BuiltSpec> built;
  for (const ShardSummary& claimed : report.manifest.shards) {
    const std::string file = claimed.file_name();
    if (claimed.tokenizer != tokenizer.version()) {
      throw UserError(fmt::format("{}: token statistics under tokenizer '{}', this build's is '{}'", file,
                                  claimed.tokenizer, tokenizer.version()));
    }
    const std::string path = (std::filesystem::path(dir) / file).string();
    if (!std::filesystem::exists(path)) {
      throw UserError(fmt::format("{}: listed in {} but missing", file, manifest_path));
    }
    std::vector<std::string> lines;
    try {
      lines = support::read_compressed_jsonl(path);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {}", file, e.what()));
    }
    ShardSummary found;
    std::set<db::WorkloadHash> workloads;
    for (size_t i = 0; i < lines.size(); ++i) {
      const int line_number = static_cast<int>(i + 1);
      const std::string where = fmt::format("{}:{}", file, line_number);
      Example e = parse_example_line(lines[i], file, line_number);
      check_script(e.script, "script", where);
      if (e.script.empty()) throw UserError(fmt::format("{}: the target script is empty (the default schedule)", where));
      if (e.existing_script) check_script(*e.existing_script, "existing_script", where);
      auto it = built.find(e.spec);
      if (it == built.end()) {
        try {
          ops::Workload w = ops::OpRegistry::global().make_workload(e.spec);
          it = built.emplace(e.spec, BuiltSpec{ir::structural_hash(w.func), prompt_text(e.spec)}).first;
        } catch (const UserError& error) {
          throw UserError(fmt::format("{}: workload '{}' does not build: {}", where, e.spec, error.what()));
        }
      }
      if (it->second.hash != e.hash) {
        throw UserError(fmt::format("{}: workload '{}' rebuilds to hash {}, the line says {}", where, e.spec,
                                    db::format_workload_hash(it->second.hash), db::format_workload_hash(e.hash)));
      }
      if (static_cast<int64_t>(e.hash % static_cast<uint64_t>(claimed.count)) != claimed.index) {
        throw UserError(fmt::format("{}: workload {} belongs in shard {} of {}", where, db::format_workload_hash(e.hash),
                                    e.hash % static_cast<uint64_t>(claimed.count), claimed.count));
      }
      KindCounts& counts = found.examples[e.split];
      (e.kind == ExampleKind::kConstruction ? counts.construction : counts.refinement) += 1;
      found.tokens.add(static_cast<int64_t>(tokenizer.encode_example(tokenizer_example(e, it->second.prompt)).size()));
      if (e.kind == ExampleKind::kConstruction && !workloads.insert(e.hash).second) {
        throw UserError(fmt::format("{}: a second construction example of workload {}", where,
                                    db::format_workload_hash(e.hash)));
      }
      report.scripts += e.existing_script ? 2 : 1;
    }
    found.with_examples = static_cast<int64_t>(workloads.size());
    compare(claimed, found);
    ++report.shards;
    report.examples += static_cast<int64_t>(lines.size());
  }
  return report;
}

}  // namespace dragon::data
