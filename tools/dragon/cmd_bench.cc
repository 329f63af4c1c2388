// dragon bench SUITE --list: the problems of a benchmark suite, one a line (id, name,
// output shape, op spec). Running a suite against its baselines is issue #7's next step and
// is refused with a message until it exists.
#include <cstdio>

#include "commands.h"
#include "dragon/suites/suite.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

struct BenchOptions {
  std::string suite;
  std::string problems;
  std::string suites_dir = suites::default_suites_dir();
  bool list = false;
};

int bench(const BenchOptions& options) {
  suites::Suite suite = suites::load_suite(options.suite, options.suites_dir);
  std::vector<suites::Problem> problems = suites::select_problems(suite, options.problems);
  if (!options.list) {
    throw UserError("dragon bench runs only with --list so far: timing a suite against its baselines is not built "
                    "yet (bench/gpu_expert_bench.cc times the expert scripts on the GPU machine)");
  }
  for (const suites::Problem& p : problems) {
    if (p.supported()) {
      std::printf("%s\t%s\t%s\t%s\n", p.id.c_str(), p.name.c_str(), p.output.c_str(), p.spec.c_str());
    } else {
      std::printf("%s\t%s\tunsupported: %s\n", p.id.c_str(), p.name.c_str(), p.output.c_str());
    }
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Benchmark suites: kernelbench-l1 (KernelBench level 1), dlrm (DLRM-Bench)");
  sub->add_option("suite", options->suite, "kernelbench-l1 or dlrm")->required();
  sub->add_flag("--list", options->list, "List the problems: id, name, output shape, op spec");
  sub->add_option("--problems", options->problems, "Only these: ids and ranges, e.g. 1-5,23 or R1,R9");
  sub->add_option("--suites-dir", options->suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)")
      ->capture_default_str();
  return [options] { return bench(*options); };
}

}  // namespace dragon::cli
