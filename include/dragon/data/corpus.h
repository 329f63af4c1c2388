// The workload corpus the training set is searched on: operator instances (op specs)
// taken from real model configurations (data/corpus/: GPT-2, LLaMA-family, BERT, ViT,
// ResNet, MobileNet, EfficientNet, UNet, Whisper-style encoders, DLRM, DCNv2) with batch
// sizes and sequence lengths swept, plus every op kind of the library at sampled shapes.
// Entries are deduplicated by the structural hash of their unscheduled function, and each
// carries its split: whole model families are held out for evaluation, and a random
// fraction of the rest (chosen by hash, so stable as the corpus grows) is validation.
// Deterministic: the same name gives the same entries in the same order on every machine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::data {

enum class Split : uint8_t { kTrain, kValidation, kHeldOut };
// "train", "validation", "held_out".
std::string_view split_id(Split split);
// The split of an id; nullopt for an unknown one.
std::optional<Split> parse_split(std::string_view id);

struct CorpusEntry {
  std::string spec;    // canonical op spec (ops::canonical_spec), rebuilds the function
  uint64_t hash = 0;   // ir::structural_hash of the unscheduled function (db::WorkloadHash)
  std::string family;  // model family ("gpt2", "llama", ...) or "op-sweep" for sampled shapes
  std::string origin;  // the first place it came from, for people: "gpt2-medium b8 s1024 mlp_up"
  Split split = Split::kTrain;
};

struct Corpus {
  std::string name;
  std::vector<CorpusEntry> entries;  // distinct hashes, in a deterministic order
};

struct CorpusProgress {
  int64_t candidates = 0;  // specs expanded so far
  int64_t distinct = 0;    // distinct workloads kept so far
};

struct CorpusOptions {
  // Where the corpus files live; empty: $DRAGON_CORPUS_DIR, else the source tree's data/corpus.
  std::string corpus_dir;
  std::function<void(const CorpusProgress&)> on_progress;  // called now and then, may be empty
};

// The names build_corpus accepts, each with a one-line description.
std::vector<std::pair<std::string, std::string>> corpus_names();

// Expands, validates and deduplicates the named corpus; a NAME that is the path of an
// existing file is read by corpus_from_spec_file. Throws UserError for an unknown name
// (listing the known ones) or a malformed corpus file ("models/gpt2.tsv:4: ...").
Corpus build_corpus(std::string_view name, const CorpusOptions& options = {});

// A user's own workloads: the op specs in `path`, one per line (blank lines and '#'
// comments skipped), family "file", split train, deduplicated by hash in file order.
// Throws UserError "PATH:LINE: why" for a spec that does not parse or build.
Corpus corpus_from_spec_file(const std::string& path);

// Shard `index` of `count` (0 <= index < count): the entries whose hash % count == index,
// so an entry stays in its shard however the corpus grows.
std::vector<CorpusEntry> shard_of(const Corpus& corpus, int64_t index, int64_t count);

}  // namespace dragon::data
