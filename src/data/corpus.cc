// SCAFFOLD: corpus_from_spec_file is real; build_corpus's named corpora are replaced by
// the corpus work before this lands.
#include "dragon/data/corpus.h"

#include <fstream>
#include <unordered_set>

#include <fmt/format.h>

#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::data {

std::string_view split_id(Split split) {
  switch (split) {
    case Split::kTrain: return "train";
    case Split::kValidation: return "validation";
    case Split::kHeldOut: return "held_out";
  }
  return "?";
}

std::optional<Split> parse_split(std::string_view id) {
  for (Split s : {Split::kTrain, Split::kValidation, Split::kHeldOut}) {
    if (split_id(s) == id) return s;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> corpus_names() { return {}; }

Corpus corpus_from_spec_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("cannot read the spec list '{}'", path));
  Corpus corpus{path, {}};
  std::unordered_set<uint64_t> seen;
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    const size_t hash_mark = line.find('#');
    if (hash_mark != std::string::npos) line.resize(hash_mark);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string spec = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    ops::Workload workload;
    try {
      workload = ops::OpRegistry::global().make_workload(spec);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}:{}: {}", path, line_number, e.what()));
    }
    const uint64_t hash = ir::structural_hash(workload.func);
    if (!seen.insert(hash).second) continue;
    corpus.entries.push_back(
        CorpusEntry{workload.spec, hash, "file", fmt::format("{}:{}", path, line_number), Split::kTrain});
  }
  return corpus;
}

Corpus build_corpus(std::string_view name, const CorpusOptions&) {
  if (std::ifstream(std::string(name))) return corpus_from_spec_file(std::string(name));
  throw UserError(fmt::format("no corpus named '{}' (scaffold)", name));
}

std::vector<CorpusEntry> shard_of(const Corpus& corpus, int64_t index, int64_t count) {
  std::vector<CorpusEntry> out;
  for (const CorpusEntry& e : corpus.entries) {
    if (static_cast<int64_t>(e.hash % static_cast<uint64_t>(count)) == index) out.push_back(e);
  }
  return out;
}

}  // namespace dragon::data
