// dragon data corpus [NAME] [--stats] [--out FILE.tsv]: builds a named workload corpus
// (data/corpus.h) and prints its counts; --out writes one row per workload. Without NAME,
// lists the corpora. Argument parsing and printing only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmd_data.h"
#include "dragon/data/corpus.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {
namespace {

struct CorpusCommandOptions {
  std::string name;
  std::string dir;
  std::string out;
  bool stats = false;
  bool quiet = false;
};

// Count rows, largest first (ties by name), as "  name  count  percent".
void print_counts(const std::string& title, const std::map<std::string, int64_t>& counts, int64_t total) {
  std::vector<std::pair<std::string, int64_t>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("%s\n", title.c_str());
  for (const auto& [name, count] : rows) {
    std::printf("  %-32s %8lld  %5.1f%%\n", name.c_str(), static_cast<long long>(count),
                total > 0 ? 100.0 * static_cast<double>(count) / static_cast<double>(total) : 0.0);
  }
}

std::string op_kind(const std::string& spec) { return spec.substr(0, spec.find(':')); }

int run_corpus(const CorpusCommandOptions& options) {
  if (options.name.empty()) {
    for (const auto& [name, description] : data::corpus_names()) std::printf("%-8s %s\n", name.c_str(), description.c_str());
    return 0;
  }
  data::CorpusOptions corpus_options;
  corpus_options.corpus_dir = options.dir;
  if (!options.quiet) {
    corpus_options.on_progress = [](const data::CorpusProgress& p) {
      std::fprintf(stderr, "\r%lld candidates, %lld distinct", static_cast<long long>(p.candidates),
                   static_cast<long long>(p.distinct));
    };
  }
  const auto started = std::chrono::steady_clock::now();
  const data::Corpus corpus = data::build_corpus(options.name, corpus_options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!options.quiet) std::fprintf(stderr, "\n");

  const int64_t total = static_cast<int64_t>(corpus.entries.size());
  std::map<std::string, int64_t> by_split, by_family, by_op;
  for (const data::CorpusEntry& e : corpus.entries) {
    ++by_split[std::string(data::split_id(e.split))];
    ++by_family[e.family];
    ++by_op[op_kind(e.spec)];
  }
  const data::CorpusStats& s = corpus.stats;
  std::printf("corpus %s: %lld distinct workloads in %.2f s\n", corpus.name.c_str(), static_cast<long long>(total),
              seconds);
  std::printf("  candidates %lld, duplicate specs %lld, duplicate functions %lld, rejected %lld, over %lld GiB %lld\n",
              static_cast<long long>(s.candidates), static_cast<long long>(s.duplicate_specs),
              static_cast<long long>(s.duplicate_hashes), static_cast<long long>(s.rejected),
              static_cast<long long>(data::kMaxWorkloadBytes >> 30), static_cast<long long>(s.over_size_cap));
  if (s.internal_errors > 0) {
    std::printf("  %lld sampled instances hit an internal error of the op library (left out; bugs to fix):\n",
                static_cast<long long>(s.internal_errors));
    for (const auto& [op, example] : s.internal_error_example) std::printf("    %s: %s\n", op.c_str(), example.c_str());
  }
  print_counts("by split", by_split, total);
  print_counts("by family", by_family, total);
  if (options.stats) {
    print_counts("by op kind", by_op, total);
    if (!s.rejected_by_op.empty()) print_counts("rejected samples by op kind", s.rejected_by_op, s.rejected);
  }
  if (!options.out.empty()) {
    std::string text = "# hash\tsplit\tfamily\torigin\tspec\n";
    for (const data::CorpusEntry& e : corpus.entries) {
      text += fmt::format("{:016x}\t{}\t{}\t{}\t{}\n", e.hash, data::split_id(e.split), e.family, e.origin, e.spec);
    }
    write_text_file(options.out, text);
    std::printf("wrote %lld rows to %s\n", static_cast<long long>(total), options.out.c_str());
  }
  return 0;
}

}  // namespace

Command add_data_corpus_subcommand(CLI::App& data) {
  auto options = std::make_shared<CorpusCommandOptions>();
  CLI::App* sub = data.add_subcommand(
      "corpus", "Build a workload corpus (smoke, models, full, or a file of op specs) and print its counts");
  sub->add_option("name", options->name, "Corpus name or spec file; none: list the corpora");
  sub->add_flag("--stats", options->stats, "Also print counts by op kind and rejected samples by op kind");
  sub->add_option("--out", options->out, "Write one row per workload: hash, split, family, origin, spec (TSV)");
  sub->add_option("--dir", options->dir, "Corpus files folder (default: $DRAGON_CORPUS_DIR, else data/corpus)");
  sub->add_flag("--quiet", options->quiet, "No progress on stderr");
  return [options] { return run_corpus(*options); };
}

}  // namespace dragon::cli
