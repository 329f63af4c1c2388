// dragon audit SUITE: would zeros, a constant or an input passed through pass KernelBench's
// check, and ours, on each problem at its full shape (bench/suite_audit.h)? Prints the
// table as Markdown; --out and --markdown keep the JSON and the table.
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "dragon/bench/suite_audit.h"
#include "dragon/bench/suite_results.h"
#include "dragon/suites/suite.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "run_provenance.h"

namespace dragon::cli {
namespace {

struct AuditOptions {
  std::string suite, problems, out, markdown;
  std::string suites_dir = suites::default_suites_dir();
  int trials = 3;
};

int audit(const AuditOptions& options) {
  suites::Suite suite = suites::load_suite(options.suite, options.suites_dir);
  bench::SuiteAuditOptions audit_options;
  audit_options.problems = options.problems;
  audit_options.kernelbench_trials = options.trials;
  const bool terminal = ::isatty(STDERR_FILENO);
  audit_options.on_start = [&](size_t index, size_t count, const suites::Problem& problem) {
    std::fprintf(stderr, terminal ? "\r\033[K[%zu/%zu] %s" : "[%zu/%zu] %s\n", index + 1, count, problem.name.c_str());
  };
  RunProvenance provenance = current_provenance();
  audit_options.command = provenance.command;
  audit_options.commit = provenance.commit;
  audit_options.started_at = provenance.started_at;
  auto write_files = [&](const bench::SuiteAudit& so_far) {
    if (!options.out.empty()) write_text_file(options.out, so_far.to_json() + "\n");
    if (!options.markdown.empty()) write_text_file(options.markdown, so_far.to_markdown());
  };
  // Rewritten after every problem: an audit cut short keeps the problems it finished.
  audit_options.on_result = [&](const bench::AuditedProblem&, const bench::SuiteAudit& so_far) { write_files(so_far); };
  bench::SuiteAudit result = bench::audit_suite(suite, audit_options);
  if (terminal) std::fprintf(stderr, "\r\033[K");
  std::printf("%s", result.to_markdown().c_str());
  write_files(result);
  return 0;
}

}  // namespace

Command add_audit_command(CLI::App& app) {
  auto options = std::make_shared<AuditOptions>();
  CLI::App* sub = app.add_subcommand(
      "audit", "Would zeros, a constant or an input passed through pass KernelBench's check, or ours, per problem (GPU)");
  sub->add_option("suite", options->suite, "kernelbench-l1, dlrm or models")->required();
  sub->add_option("--problems", options->problems, "Only these: ids and ranges, e.g. 1-5,23 or R1,R9");
  sub->add_option("--trials", options->trials, "torch.rand draws for KernelBench's check")->capture_default_str();
  sub->add_option("--out", options->out, "Write the audit as JSON");
  sub->add_option("--markdown", options->markdown, "Write the Markdown table");
  sub->add_option("--suites-dir", options->suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)")
      ->capture_default_str();
  return [options] { return audit(*options); };
}

}  // namespace dragon::cli
