// dragon bench SUITE: --list prints the problems; otherwise every selected problem runs on
// the GPU against its baselines (bench/suite_run.h), the results file is rewritten after
// each problem (the report too), and --report renders the HTML page. --from re-renders a report from a
// results file without a GPU.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/bench/applicable_baselines.h"
#include "dragon/bench/eager_plugin.h"
#include "dragon/bench/html_report.h"
#include "dragon/bench/suite_results.h"
#include "dragon/bench/suite_run.h"
#include "dragon/db/database.h"
#include "dragon/lower/target.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/suites/suite.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "run_provenance.h"

namespace dragon::cli {
namespace {

struct BenchOptions {
  std::string suite;
  std::string problems;
  std::string suites_dir = suites::default_suites_dir();
  bool list = false;
  std::string scripts_dir, out, report, peaks_file, db;
  std::vector<std::string> from;
  bool no_eager = false, no_cublas = false, no_cudnn = false;
  double max_seconds = 1.0;
  std::optional<int64_t> max_trials;
};

// Id, name, output shape, op spec and the baselines that apply (bench/applicable_baselines.h).
void list(const std::vector<suites::Problem>& problems) {
  const bench::EagerBaselines* eager = bench::eager_plugin().baselines;
  for (const suites::Problem& p : problems) {
    if (p.supported()) {
      std::string baselines =
          bench::applicable_baselines(ops::OpRegistry::global().make_workload(p.spec), eager).describe();
      std::printf("%s\t%s\t%s\t%s\t%s\n", p.id.c_str(), p.name.c_str(), p.output.c_str(), p.spec.c_str(),
                  baselines.c_str());
    } else {
      std::printf("%s\t%s\tunsupported: %s\n", p.id.c_str(), p.name.c_str(), p.output.c_str());
    }
  }
}

std::string time_of(const bench::Contender* c) {
  if (!c || !c->time) return c ? c->status : "-";
  return fmt::format("{:.4g} ms", c->time->median_ms);
}

// One line per finished problem on stdout (what a log keeps).
void print_result(const bench::ProblemResult& p) {
  const bench::Contender* torch = bench::find_baseline(p, "torch");
  const bench::Contender* cublas = bench::find_baseline(p, "cublas");
  const bench::Contender* cudnn = bench::find_baseline(p, "cudnn");
  std::string line = fmt::format("{:<5} {:<48} {:<11} ours {:<12} eager {:<12}", p.id, p.name, p.status,
                                 time_of(&p.ours), time_of(torch));
  if (p.tuned) line += fmt::format(" tuned {:<12}", time_of(&*p.tuned));
  if (cublas) line += fmt::format(" cuBLAS {:<12}", time_of(cublas));
  if (cudnn) line += fmt::format(" cuDNN {:<12}", time_of(cudnn));
  if (torch) {
    if (std::optional<double> s = p.speedup_over(*torch); s) line += fmt::format(" {:.3g}x vs eager", *s);
    if (p.tuned) {
      if (std::optional<double> s = bench::ProblemResult::speedup_of(*p.tuned, *torch); s) {
        line += fmt::format(" (tuned {:.3g}x)", *s);
      }
    }
  }
  if (!p.message.empty()) line += "  (" + p.message.substr(0, 160) + ")";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// With --db: the tuned kernels' geometric-mean speedup over eager and over our default
// schedule, on the problems where both were timed and correct.
void print_tuned_summary(const bench::SuiteRun& run) {
  double log_eager = 0, log_default = 0;
  int n_eager = 0, n_default = 0, tuned = 0, faster = 0;
  for (const bench::ProblemResult& p : run.problems) {
    if (!p.tuned) continue;
    ++tuned;
    if (const bench::Contender* torch = bench::find_baseline(p, "torch")) {
      if (std::optional<double> s = bench::ProblemResult::speedup_of(*p.tuned, *torch); s) {
        log_eager += std::log(*s);
        ++n_eager;
        faster += *s > 1 ? 1 : 0;
      }
    }
    if (std::optional<double> s = bench::ProblemResult::speedup_of(*p.tuned, p.ours); s) {
      log_default += std::log(*s);
      ++n_default;
    }
  }
  std::printf("tuned kernels on %d problems: over eager %s on %d (faster on %d), over the default schedule %s on %d\n",
              tuned, n_eager ? fmt::format("{:.3g}x", std::exp(log_eager / n_eager)).c_str() : "-", n_eager, faster,
              n_default ? fmt::format("{:.3g}x", std::exp(log_default / n_default)).c_str() : "-", n_default);
}

// Several files (one suite run in chunks, e.g. one per device call) make one report: the
// first file's provenance, every file's problems in order, each command kept.
int render(const BenchOptions& options) {
  if (options.report.empty()) throw UserError("--from needs --report FILE.html to write");
  bench::SuiteRun run = bench::load_suite_run(options.from[0]);
  for (size_t i = 1; i < options.from.size(); ++i) {
    bench::SuiteRun more = bench::load_suite_run(options.from[i]);
    if (more.suite != run.suite) {
      throw UserError(options.from[i] + " is a run of " + more.suite + ", " + options.from[0] + " of " + run.suite);
    }
    run.command += " ; " + more.command;
    if (more.commit != run.commit) run.commit += " and " + more.commit;
    for (bench::ProblemResult& p : more.problems) run.problems.push_back(std::move(p));
  }
  write_text_file(options.report, bench::render_html_report(run));
  std::printf("wrote %s (%zu problems)\n", options.report.c_str(), run.problems.size());
  return 0;
}

int bench_suite(const BenchOptions& options) {
  if (!options.from.empty()) return render(options);
  suites::Suite suite = suites::load_suite(options.suite, options.suites_dir);
  if (options.list) {
    list(suites::select_problems(suite, options.problems));
    return 0;
  }
  if (options.out.empty()) throw UserError("dragon bench " + options.suite + ": give --out FILE.json for the results (or --list)");
  if (!runtime::cuda_device_available()) {
    throw UserError("dragon bench runs on a CUDA GPU and this machine has none (--list works anywhere; --from "
                    "renders a report from a results file)");
  }
  bench::SuiteRunOptions run_options;
  run_options.problems = options.problems;
  run_options.scripts_dir = options.scripts_dir;
  run_options.eager = !options.no_eager;
  run_options.cublas = !options.no_cublas;
  run_options.cudnn = !options.no_cudnn;
  run_options.timer.max_seconds = options.max_seconds;
  runtime::CudaDriver* driver = runtime::CudaDriver::get().value();
  std::optional<db::Database> database;
  if (!options.db.empty()) {
    database.emplace(db::Database::open(options.db, {.read_only = true}));
    // Records are filed under the machine they were measured on: this GPU and driver.
    const db::Hardware hardware{driver->device_name(), harness::read_gpu_state().driver_version};
    const std::optional<int64_t> max_trials = options.max_trials;
    run_options.tuned = [&database, hardware, max_trials](const suites::Problem&,
                                                          const ir::PrimFunc& func) -> std::optional<bench::TunedSchedule> {
      db::TuningKey key{db::Workload::of(func).hash, {"cuda", lower::Target::cuda_h200().arch}, hardware};
      // The bench measures today's default itself; the tuned row is the best search record
      // (of the first --max-trials scripts searched, when given).
      std::optional<db::StoredRecord> best =
          max_trials ? database->best_script_within(key, *max_trials) : database->best_script(key);
      if (!best) return std::nullopt;
      schedule::Schedule sch = schedule::replay(script::decode(best->record.script), func);
      return bench::TunedSchedule{
          sch.func(), fmt::format("record {}, {:.4g} ms when tuned{}", best->id, best->record.median_ms().value_or(0),
                                  max_trials ? fmt::format(", best of the first {} scripts", *max_trials) : "")};
    };
  }
  if (!options.peaks_file.empty()) {
    run_options.peaks = bench::load_peaks(options.peaks_file);
  } else {
    std::fprintf(stderr, "measuring the GPU's peaks (pass --peaks FILE from `dragon peaks --out FILE` to skip)...\n");
    run_options.peaks = bench::measure_peaks(driver);
  }

  RunProvenance provenance = current_provenance();
  run_options.command = provenance.command;
  run_options.commit = provenance.commit;
  run_options.started_at = provenance.started_at;
  const bool terminal = ::isatty(STDERR_FILENO);
  auto started = std::chrono::steady_clock::now();
  run_options.on_start = [&](size_t index, size_t count, const suites::Problem& problem) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    int width = 30, done = static_cast<int>(width * index / std::max<size_t>(count, 1));
    std::string bar = std::string(done, '#') + std::string(width - done, '.');
    if (terminal) {
      std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %s (%.0f s)", bar.c_str(), index + 1, count, problem.name.c_str(), elapsed);
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s\n", index + 1, count, problem.name.c_str());
    }
  };
  run_options.on_result = [&](const bench::ProblemResult& result, const bench::SuiteRun& so_far) {
    if (terminal) std::fprintf(stderr, "\r\033[K");
    print_result(result);
    // Rewritten after every problem: an interrupted run keeps what it measured.
    write_text_file(options.out, bench::suite_run_to_json(so_far));
    if (!options.report.empty()) write_text_file(options.report, bench::render_html_report(so_far));
  };
  bench::SuiteRun run = bench::run_suite(suite, run_options);
  write_text_file(options.out, bench::suite_run_to_json(run));
  if (!options.report.empty()) write_text_file(options.report, bench::render_html_report(run));

  int torch_count = 0;
  std::optional<double> geomean = bench::geomean_speedup(run, "torch", &torch_count);
  if (database) print_tuned_summary(run);
  std::printf("wrote %s%s; %zu problems on %s%s\n", options.out.c_str(),
              options.report.empty() ? "" : (" and " + options.report).c_str(), run.problems.size(), run.device.c_str(),
              geomean ? fmt::format(", geometric mean speedup over eager {:.3g}x on {} problems", *geomean, torch_count).c_str()
                      : "");
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Benchmark suites on the GPU against libtorch eager, cuBLAS and cuDNN: kernelbench-l1, dlrm, models");
  sub->add_option("suite", options->suite, "kernelbench-l1, dlrm or models");
  sub->add_flag("--list", options->list, "List the problems: id, name, output shape, op spec, the baselines that apply");
  sub->add_option("--problems", options->problems, "Only these: ids and ranges, e.g. 1-5,23 or R1,R9");
  sub->add_option("--scripts", options->scripts_dir, "A folder of ID.script or NAME.script files (else the default schedule)");
  sub->add_option("--out", options->out, "The results file (JSON), rewritten after every problem");
  sub->add_option("--report", options->report, "Also write the HTML report here");
  sub->add_option("--db", options->db,
                  "A tuning database (dragon tune): each problem's best record on this GPU runs beside the default "
                  "schedule and the baselines, verified and timed here");
  sub->add_option("--max-trials", options->max_trials,
                  "With --db: each problem's best among the first N scripts searched for it (a trial budget, as "
                  "the tuning issue's targets count them)");
  sub->add_option("--peaks", options->peaks_file, "Peaks measured by `dragon peaks --out FILE` (else measured first)");
  sub->add_option("--from", options->from, "Render --report from these results files (chunks of one suite) instead of running");
  sub->add_flag("--no-eager", options->no_eager, "Leave out the libtorch eager baselines");
  sub->add_flag("--no-cublas", options->no_cublas, "Leave out the cuBLAS baselines");
  sub->add_flag("--no-cudnn", options->no_cudnn,
                "Leave out the cuDNN baselines (convolutions, pooling, softmax; DRAGON_CUDNN_LIBRARY names the library)");
  sub->add_option("--max-seconds", options->max_seconds, "Cap on each timing's measuring phase")->capture_default_str();
  sub->add_option("--suites-dir", options->suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)")
      ->capture_default_str();
  return [options] {
    if (options->suite.empty() && options->from.empty()) throw UserError("dragon bench: name a suite (or --from RESULTS.json)");
    if (options->max_trials && *options->max_trials < 1) {
      throw UserError(fmt::format("dragon bench: --max-trials {}: give a number of scripts, at least 1", *options->max_trials));
    }
    if (options->max_trials && options->db.empty()) throw UserError("dragon bench: --max-trials needs --db");
    return bench_suite(*options);
  };
}

}  // namespace dragon::cli
