// dragon data build --corpus NAME --db FILE --out DIR [--shard K/N] [--time-budget S]:
// tunes one shard of the corpus (resuming from the database) and writes its search-derived
// examples with the rebuilt manifest (data/dataset_builder.h, docs/data-set.md). Argument
// parsing and printing only.
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "cmd_data.h"
#include "dragon/data/corpus.h"
#include "dragon/data/dataset_builder.h"
#include "dragon/support/error.h"
#include "progress_line.h"
#include "run_provenance.h"
#include "tune_environments.h"

namespace dragon::cli {
namespace {

struct DataBuildOptions {
  std::string corpus;
  std::string db;
  std::string out;
  std::string shard = "0/1";
  SearchRunFlags search;
  double min_ratio = 1.2;
  double max_ratio = 4.0;
  int refinements = 2;
  bool mine_only = false;
  std::string device;  // --mine-only: the records' device and driver (empty: the only one)
  std::string driver;
};

// "K/N" -> (K, N).
std::pair<int64_t, int64_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  int64_t k = -1, n = 0;
  auto number = [](std::string_view s, int64_t& value) {
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    return error == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), k) ||
      !number(std::string_view(text).substr(slash + 1), n) || n < 1 || k < 0 || k >= n) {
    throw UserError(fmt::format("--shard '{}': expected K/N with 0 <= K < N, e.g. 0/4", text));
  }
  return {k, n};
}

std::string progress_text(const data::BuildProgress& p) {
  return fmt::format("{} {}/{} workloads  {} examples  {:.1f} candidates/s  {:.0f} s",
                     ProgressLine::bar(p.workloads_done, p.workloads), p.workloads_done, p.workloads, p.examples,
                     p.candidates_per_second, p.elapsed_s);
}

void print_shard(const DataBuildOptions& o, const data::BuildResult& result) {
  const data::ShardSummary& s = result.shard;
  std::printf("%s/%s: %lld examples (%lld construction, %lld refinement) from %lld of %lld workloads; "
              "%lld default best, %lld with nothing verified%s\n",
              o.out.c_str(), s.file_name().c_str(), static_cast<long long>(s.example_count()),
              static_cast<long long>(s.by_kind().construction), static_cast<long long>(s.by_kind().refinement),
              static_cast<long long>(s.with_examples), static_cast<long long>(s.workloads),
              static_cast<long long>(s.default_best), static_cast<long long>(s.no_ok_record),
              !s.partial                ? ""
              : o.mine_only             ? "; PARTIAL (workloads with fewer trials than --trials)"
                                        : "; PARTIAL (time budget): rerun the same command to complete it");
}

// --mine-only: the shard from the database's records alone, on any machine.
int mine(const DataBuildOptions& o, const data::Corpus& corpus, data::BuildOptions options) {
  db::Database database = db::Database::open(o.db);
  const auto [target, hardware] = data::records_key(database, o.search.target, o.device, o.driver);
  std::printf("mining the records of %s on %s\n", target.describe().c_str(), hardware.describe().c_str());
  data::BuildResult result = data::mine_shard(corpus, database, target, hardware, o.out, options);
  print_shard(o, result);
  std::printf("\n%s", data::describe(result.manifest).c_str());
  return 0;
}

int build(const DataBuildOptions& o) {
  const auto [index, count] = parse_shard(o.shard);
  if (!o.mine_only && (!o.device.empty() || !o.driver.empty())) {
    throw UserError("--device and --driver choose the records --mine-only mines; a tuning run files its records "
                    "under the device it measures on");
  }
  data::Corpus corpus = data::build_corpus(o.corpus);
  data::BuildOptions options;
  options.shard_index = index;
  options.shard_count = count;
  options.trials_per_workload = o.search.trials;
  options.mining = {o.min_ratio, o.max_ratio, o.refinements};
  options.commit = current_provenance().commit;
  if (o.mine_only) return mine(o, corpus, options);

  SearchRun run = start_search_run(o.search, o.db, "dragon data build");
  ProgressLine progress(o.search.quiet);
  options.batch_size = run.batch_size;
  options.tasks_per_round = o.search.tasks_per_round;
  if (o.search.time_budget > 0) options.time_budget_s = o.search.time_budget;
  options.search = run.search;
  // Where a long build's time goes, a line a minute: tuning's proposing and measuring, and
  // the measurers' costs per candidate.
  double logged_at = 0;
  options.on_progress = [&](const data::BuildProgress& p) {
    progress.show(progress_text(p));
    if (p.elapsed_s - logged_at >= 60) {
      logged_at = p.elapsed_s;
      progress.log(fmt::format("{:.0f} s: proposing {:.1f} s, measuring {:.1f} s; {}", p.elapsed_s, p.propose_s,
                               p.measure_s, run.environments->costs_summary()));
    }
  };
  options.log = [&](const std::string& line) { progress.log(line); };

  data::BuildResult result = data::build_shard(corpus, run.database, run.environment(), *run.cost_model, o.out, options);
  progress.finish();

  print_shard(o, result);
  std::printf("run: %lld candidates measured in %.1f s (%.2f candidates/s); %s\n",
              static_cast<long long>(result.measured), result.seconds,
              result.seconds > 0 ? static_cast<double>(result.measured) / result.seconds : 0.0,
              run.environments->costs_summary().c_str());
  std::printf("\n%s", data::describe(result.manifest).c_str());
  return 0;
}

}  // namespace

Command add_data_build_subcommand(CLI::App& data) {
  auto o = std::make_shared<DataBuildOptions>();
  CLI::App* sub = data.add_subcommand(
      "build", "Tune a shard of a corpus (resuming from --db) and write its training examples and manifest to --out");
  sub->add_option("--corpus", o->corpus, "A corpus name (see dragon data corpus) or a file of op specs, one a line")
      ->required();
  sub->add_option("--db", o->db, "The tuning database (SQLite); created if missing, resumed if not")->required();
  sub->add_option("--out", o->out, "The data set directory (shards and manifest.json)")->required();
  sub->add_option("--shard", o->shard, "K/N: this run's shard, the workloads whose hash % N == K")
      ->capture_default_str();
  // A run stopped by --time-budget still writes what it mined (the shard, marked partial).
  // Workloads are small and many: a round measures 16 together.
  o->search.tasks_per_round = 16;
  add_search_run_flags(*sub, o->search, "workload");
  sub->add_option("--min-ratio", o->min_ratio, "Refinement prompts at least this much slower than the best")
      ->capture_default_str();
  sub->add_option("--max-ratio", o->max_ratio, "... and at most this much")->capture_default_str();
  sub->add_option("--refinements", o->refinements, "Refinement examples kept per workload, spread over the range")
      ->capture_default_str();
  // What a run cut off before it wrote its shard (killed, out of time) had already
  // committed to the database: this writes the shard from those records, on any machine
  // (committed records rebuild a shard without a GPU).
  sub->add_flag("--mine-only", o->mine_only,
                "Tune nothing: write the shard from the records already in --db, of the --target's only device there "
                "or the one --device (and --driver) names; needs no GPU");
  sub->add_option("--device", o->device, "With --mine-only: the device whose records to mine (\"NVIDIA H100 80GB HBM3\")");
  sub->add_option("--driver", o->driver, "With --mine-only: the driver too, where the device has records under several");
  return [o] { return build(*o); };
}

}  // namespace dragon::cli
