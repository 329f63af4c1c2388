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
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

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

// What building a corpus met besides its entries, for `dragon data corpus --stats`.
struct CorpusStats {
  int64_t candidates = 0;        // specs expanded (model rows x sweep points, sampled op instances)
  int64_t duplicate_specs = 0;   // the same spec (as written or canonical) as an earlier candidate
  int64_t duplicate_hashes = 0;  // another spec, but the same function as an earlier entry
  int64_t rejected = 0;          // sampled instances that do not parse or build (op sweep only)
  int64_t over_size_cap = 0;     // distinct specs whose buffers exceed kMaxWorkloadBytes
  std::map<std::string, int64_t> rejected_by_op;  // op kind -> rejected samples
  // Sampled instances whose builder failed an internal check: bugs of the op library that
  // the sweep found, left out and reported (op kind -> the first spec and message), never
  // silent. In a model file the same failure is thrown.
  int64_t internal_errors = 0;
  std::map<std::string, std::string> internal_error_example;
};

struct Corpus {
  std::string name;
  std::vector<CorpusEntry> entries;  // distinct hashes, in a deterministic order
  CorpusStats stats;
};

// A workload whose parameter buffers (inputs and outputs) take more bytes than this is
// left out of named corpora, so that every workload runs on one GPU with room for a
// reference and a candidate at once.
inline constexpr int64_t kMaxWorkloadBytes = int64_t{4} << 30;

struct CorpusProgress {
  int64_t candidates = 0;  // specs expanded so far
  int64_t distinct = 0;    // distinct workloads kept so far
};

struct CorpusOptions {
  // Where the corpus files live; empty: $DRAGON_CORPUS_DIR, else the source tree's data/corpus.
  std::string corpus_dir;
  std::function<void(const CorpusProgress&)> on_progress;  // called now and then, may be empty
};

// Where corpus files live when CorpusOptions::corpus_dir is empty: $DRAGON_CORPUS_DIR,
// else the source tree's data/corpus.
std::string default_corpus_dir();

// The bytes of a function's parameter buffers (what a run must allocate).
int64_t workload_bytes(const ir::PrimFunc& func);

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
// so an entry stays in its shard however the corpus grows, in hash order. The corpus lists
// its entries family by family; a shard tuned in that order and cut short by its time
// budget tuned the alphabet's first families only (the first 32 workloads of the full
// corpus's shard 0 of 512 were bert, dcnv2 and 30 efficientnet, held out), while in hash
// order any prefix is a uniform sample.
std::vector<CorpusEntry> shard_of(const Corpus& corpus, int64_t index, int64_t count);

}  // namespace dragon::data
