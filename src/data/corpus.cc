// Building named corpora (corpus.h): model files and the op sweep expanded, specs
// deduplicated before any function is built, functions deduplicated by structural hash,
// then split. The file formats live in model_file.h, op_sweep.h and split_rules.h.
#include "dragon/data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/env.h"
#include "dragon/support/error.h"
#include "model_file.h"
#include "op_sweep.h"
#include "split_rules.h"

namespace dragon::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kProgressEvery = 4096;

// Accumulates candidates into distinct entries, remembering for each entry the first
// held-out family that produced it.
class CorpusBuilder {
 public:
  CorpusBuilder(std::string name, SplitRules rules, const CorpusOptions& options)
      : rules_(std::move(rules)), options_(options) {
    corpus_.name = std::move(name);
  }

  // strict: a spec that does not parse or build is an error naming `where` and `origin`
  // (model files are data we wrote); otherwise it is counted as rejected (sampled specs).
  void add(const std::string& spec, const std::string& family, const std::string& origin, const std::string& where,
           bool strict) {
    CorpusStats& stats = corpus_.stats;
    if (++stats.candidates % kProgressEvery == 0) report_progress();
    if (auto it = spec_index_.find(spec); it != spec_index_.end()) {
      ++stats.duplicate_specs;
      note_family(it->second, family, origin);
      return;
    }
    const ops::OpRegistry& registry = ops::OpRegistry::global();
    const ops::OpKind* op = registry.find(std::string_view(spec).substr(0, spec.find(':')));
    auto refuse = [&](const UserError& e) {
      if (strict) throw UserError(fmt::format("{}: {}: {}", where, origin, e.what()));
      ++stats.rejected;
      ++stats.rejected_by_op[op ? op->name : spec.substr(0, spec.find(':'))];
      spec_index_.emplace(spec, kRejected);
    };
    std::optional<ops::OpArgs> args;
    try {
      args = registry.parse(spec);
    } catch (const UserError& e) {
      refuse(e);
      return;
    }
    std::string canonical = ops::canonical_spec(*op, *args);
    if (auto it = spec_index_.find(canonical); it != spec_index_.end()) {
      ++stats.duplicate_specs;
      spec_index_.emplace(spec, it->second);
      note_family(it->second, family, origin);
      return;
    }
    ir::PrimFunc func;
    try {
      func = op->build(*args);
    } catch (const UserError& e) {
      refuse(e);
      return;
    } catch (const InternalError& e) {
      if (strict) throw;
      ++stats.internal_errors;
      stats.internal_error_example.emplace(op->name, fmt::format("{}: {}", canonical, e.what()));
      spec_index_.emplace(spec, kRejected);
      return;
    }
    int64_t index = kOverCap;
    if (workload_bytes(func) > kMaxWorkloadBytes) {
      ++stats.over_size_cap;
    } else {
      const uint64_t hash = ir::structural_hash(func);
      auto [it, fresh] = hash_index_.emplace(hash, static_cast<int64_t>(corpus_.entries.size()));
      index = it->second;
      if (fresh) {
        corpus_.entries.push_back(CorpusEntry{canonical, hash, family, origin, Split::kTrain});
        held_out_origin_.emplace_back();
      } else {
        ++stats.duplicate_hashes;
      }
      note_family(index, family, origin);
    }
    if (spec != canonical) spec_index_.emplace(spec, index);
    spec_index_.emplace(std::move(canonical), index);
  }

  Corpus finish() {
    for (size_t i = 0; i < corpus_.entries.size(); ++i) {
      CorpusEntry& e = corpus_.entries[i];
      if (held_out_origin_[i]) {
        // Held out wherever else it appears, and named after the held-out family.
        e.split = Split::kHeldOut;
        e.family = held_out_origin_[i]->first;
        e.origin = held_out_origin_[i]->second;
      } else {
        e.split = rules_.in_validation(e.hash) ? Split::kValidation : Split::kTrain;
      }
    }
    report_progress();
    return std::move(corpus_);
  }

 private:
  static constexpr int64_t kOverCap = -1;
  static constexpr int64_t kRejected = -2;

  void note_family(int64_t index, const std::string& family, const std::string& origin) {
    if (index < 0 || held_out_origin_[index] || !rules_.is_held_out(family)) return;
    held_out_origin_[index] = std::make_pair(family, origin);
  }

  void report_progress() const {
    if (options_.on_progress) {
      options_.on_progress(CorpusProgress{corpus_.stats.candidates, static_cast<int64_t>(corpus_.entries.size())});
    }
  }

  SplitRules rules_;
  const CorpusOptions& options_;
  Corpus corpus_;
  // Spec text (as written, and canonical) -> entry index, kOverCap or kRejected.
  std::unordered_map<std::string, int64_t> spec_index_;
  std::unordered_map<uint64_t, int64_t> hash_index_;
  std::vector<std::optional<std::pair<std::string, std::string>>> held_out_origin_;
};

// The *.tsv files of `dir` (but splits.tsv), sorted by name.
std::vector<fs::path> model_files(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw UserError(fmt::format("no corpus folder {}", dir.string()));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tsv" && entry.path().filename() != "splits.tsv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void add_model_files(CorpusBuilder& builder, const fs::path& dir, const std::string& label_prefix) {
  for (const fs::path& path : model_files(dir)) {
    const ModelFile file = ModelFile::read(path.string(), label_prefix + path.filename().string());
    file.expand([&](const std::string& spec, const std::string& origin, const std::string& where) {
      builder.add(spec, file.family(), origin, where, /*strict=*/true);
    });
  }
}

}  // namespace

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

std::string default_corpus_dir() {
  if (std::optional<std::string> dir = env_corpus_dir()) return *dir;
  return std::string(DRAGON_SOURCE_DIR) + "/data/corpus";
}

int64_t workload_bytes(const ir::PrimFunc& func) {
  int64_t bytes = 0;
  for (const ir::Param& p : func->params) {
    bytes += p.buffer->num_elements() * p.buffer->dtype.bytes() * p.buffer->dtype.lanes();
  }
  return bytes;
}

std::vector<std::pair<std::string, std::string>> corpus_names() {
  return {
      {"smoke", "tens of small workloads from tiny model configurations (smoke/), for CI tests of the data builder"},
      {"models", "operators of real model configurations (models/*.tsv), batch, sequence, image size and dtype swept"},
      {"full", "models plus every op kind of the library at sampled shapes (op_sweep.tsv); at least 54,000 workloads"},
  };
}

Corpus corpus_from_spec_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("cannot read the spec list '{}'", path));
  Corpus corpus{path, {}, {}};
  std::unordered_set<uint64_t> seen;
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    const size_t hash_mark = line.find('#');
    if (hash_mark != std::string::npos) line.resize(hash_mark);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string spec = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    ++corpus.stats.candidates;
    ops::Workload workload;
    try {
      workload = ops::OpRegistry::global().make_workload(spec);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}:{}: {}", path, line_number, e.what()));
    }
    const uint64_t hash = ir::structural_hash(workload.func);
    if (!seen.insert(hash).second) {
      ++corpus.stats.duplicate_hashes;
      continue;
    }
    corpus.entries.push_back(
        CorpusEntry{workload.spec, hash, "file", fmt::format("{}:{}", path, line_number), Split::kTrain});
  }
  return corpus;
}

Corpus build_corpus(std::string_view name, const CorpusOptions& options) {
  const fs::path dir = options.corpus_dir.empty() ? fs::path(default_corpus_dir()) : fs::path(options.corpus_dir);
  if (name == "smoke") {
    CorpusBuilder builder("smoke", SplitRules::read((dir / "smoke" / "splits.tsv").string(), "smoke/splits.tsv"),
                          options);
    add_model_files(builder, dir / "smoke", "smoke/");
    return builder.finish();
  }
  if (name == "models" || name == "full") {
    CorpusBuilder builder(std::string(name), SplitRules::read((dir / "splits.tsv").string(), "splits.tsv"), options);
    add_model_files(builder, dir / "models", "models/");
    if (name == "full") {
      const OpSweep sweep = OpSweep::read((dir / "op_sweep.tsv").string(), "op_sweep.tsv");
      sweep.expand(ops::OpRegistry::global(), [&](const std::string& spec, const std::string& origin) {
        builder.add(spec, "op-sweep", origin, "op_sweep.tsv", /*strict=*/false);
      });
    }
    return builder.finish();
  }
  if (fs::is_regular_file(fs::path(name))) return corpus_from_spec_file(std::string(name));
  std::string known;
  for (const auto& [n, description] : corpus_names()) known += (known.empty() ? "" : ", ") + n;
  throw UserError(fmt::format("no corpus named '{}' and no such spec file; corpora: {}", name, known));
}

std::vector<CorpusEntry> shard_of(const Corpus& corpus, int64_t index, int64_t count) {
  if (count < 1 || index < 0 || index >= count) {
    throw UserError(fmt::format("shard {} of {}: need 0 <= index < count", index, count));
  }
  std::vector<CorpusEntry> out;
  for (const CorpusEntry& e : corpus.entries) {
    if (static_cast<int64_t>(e.hash % static_cast<uint64_t>(count)) == index) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const CorpusEntry& a, const CorpusEntry& b) { return a.hash < b.hash; });
  return out;
}

}  // namespace dragon::data
