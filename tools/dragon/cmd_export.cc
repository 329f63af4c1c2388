// dragon export kernelbench PROBLEM --db FILE -o FILE.py: the best verified kernel of a
// KernelBench problem in a tuning database, as a KernelBench-format ModelNew file
// (include/dragon/bench/kernelbench_export.h); --reference FILE.py also writes a
// KernelBench-format Model of the problem written from its op spec.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/bench/kernelbench_export.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {
namespace {

struct ExportOptions {
  std::string problem;
  bench::KernelBenchExportOptions kernelbench;
  std::string output;
  std::string reference;
};

int export_kernelbench(const ExportOptions& o) {
  bench::KernelBenchKernel kernel = bench::best_kernelbench_kernel(o.problem, o.kernelbench);
  // Both texts first, so a kernel the format cannot express leaves no file behind.
  const std::string model_new = bench::write_kernelbench_model_new(kernel);
  const std::string reference = o.reference.empty() ? "" : bench::write_kernelbench_reference(kernel);
  write_text_file(o.output, model_new);
  if (!o.reference.empty()) write_text_file(o.reference, reference);
  std::fprintf(stderr, "wrote %s: problem %s, %zu kernel%s, %s\n", o.output.c_str(), kernel.problem.name.c_str(),
               kernel.source.kernels.size(), kernel.source.kernels.size() == 1 ? "" : "s", kernel.provenance.c_str());
  if (!o.reference.empty()) std::fprintf(stderr, "wrote %s: the reference Model of %s\n", o.reference.c_str(), kernel.spec.c_str());
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "Export a tuned kernel to another benchmark's format");
  sub->require_subcommand(1);
  CLI::App* kb = sub->add_subcommand(
      "kernelbench", "The best verified kernel of a KernelBench problem as a KernelBench ModelNew file (load_inline)");
  kb->add_option("problem", o->problem, "The problem's id (19) or name (19_ReLU)")->required();
  kb->add_option("--db", o->kernelbench.db, "The tuning database")->required();
  kb->add_option("-o,--output", o->output, "The ModelNew file to write (FILE.py)")->required();
  kb->add_option("--reference", o->reference,
                 "Also write the problem's reference Model, get_inputs and get_init_inputs here (from the op spec)");
  kb->add_option("--suite", o->kernelbench.suite, "The suite the problem is in")->capture_default_str();
  kb->add_option("--suites-dir", o->kernelbench.suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)");
  return [o] { return export_kernelbench(*o); };
}

}  // namespace dragon::cli
