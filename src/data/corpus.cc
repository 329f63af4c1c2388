// SCAFFOLD (replaced by the corpus work before this lands).
#include "dragon/data/corpus.h"

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

Corpus build_corpus(std::string_view name, const CorpusOptions&) {
  throw UserError("no corpus named '" + std::string(name) + "' (scaffold)");
}

std::vector<CorpusEntry> shard_of(const Corpus& corpus, int64_t index, int64_t count) {
  std::vector<CorpusEntry> out;
  for (const CorpusEntry& e : corpus.entries) {
    if (static_cast<int64_t>(e.hash % static_cast<uint64_t>(count)) == index) out.push_back(e);
  }
  return out;
}

}  // namespace dragon::data
