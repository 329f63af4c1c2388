// Finding the kernel to export (kernelbench_export.h): the suite's problem, its op, the
// database's best verified CUDA record of its workload, and the code the codegen prints
// for that schedule (runtime::generate, the one lower -> codegen chain).
#include "dragon/bench/kernelbench_export.h"

#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/db/database.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/default_schedule.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

suites::Problem find_problem(std::string_view wanted, const KernelBenchExportOptions& options) {
  const suites::Suite suite =
      suites::load_suite(options.suite, options.suites_dir.empty() ? suites::default_suites_dir() : options.suites_dir);
  for (const suites::Problem& p : suite.problems) {
    if (p.id != wanted && p.name != wanted) continue;
    if (!p.supported()) {
      throw UserError(fmt::format("{}: problem {} of {} has no op spec we can express: {}", p.where, p.name,
                                  suite.name, p.output));
    }
    return p;
  }
  throw UserError(fmt::format("no problem '{}' in suite {} (give its id, as in \"19\", or its name, as in "
                              "\"19_ReLU\"; `dragon bench {} --list` lists them)",
                              wanted, suite.name, suite.name));
}

}  // namespace

KernelBenchKernel best_kernelbench_kernel(std::string_view wanted, const KernelBenchExportOptions& options) {
  if (options.db.empty()) throw UserError("dragon export kernelbench: give --db FILE");
  KernelBenchKernel kernel;
  kernel.problem = find_problem(wanted, options);
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  const ops::Workload workload = registry.make_workload(kernel.problem.spec);
  kernel.spec = workload.spec;
  kernel.func = workload.func;
  std::optional<KernelBenchModule> module = kernelbench_module(*workload.op, registry.parse(workload.spec));
  if (!module) {
    throw UserError(fmt::format("{}: problem {} is a {}, which the KernelBench module table "
                                "(src/bench/kernelbench_module.cc) has no Model for (at these parameters); it has {}",
                                kernel.problem.where, kernel.problem.name, workload.op->name,
                                fmt::join(kernelbench_module_kinds(), ", ")));
  }
  kernel.module = std::move(*module);

  // Today's default schedule and its kernel's hash: a record of the default (script "")
  // counts only when it measured this very code, since the default changes between
  // versions and an older one's time says nothing of today's kernel.
  const lower::Target target = lower::Target::cuda_h200();
  runtime::Generated default_generated =
      runtime::generate(search::default_schedule(workload.func, target).func(), target);
  const std::string default_hash = default_generated.cuda_kernel_hash(target.arch);

  // The fastest verified CUDA record over every machine the workload was tuned on: the best
  // tuned script, or today's default where it was measured faster.
  const db::Database database = db::Database::open(options.db, {.read_only = true});
  const db::WorkloadHash hash = db::Workload::of(workload.func, workload.spec).hash;
  std::optional<db::StoredRecord> best;
  db::TuningKey best_key;
  int64_t records = 0;
  auto consider = [&](std::optional<db::StoredRecord> r, const db::TuningKey& key) {
    if (r && (!best || *r->record.median_ms() < *best->record.median_ms())) {
      best = std::move(r);
      best_key = key;
    }
  };
  for (const db::TuningKey& key : database.keys()) {
    if (key.workload != hash || key.target.name != "cuda") continue;
    db::RecordFilter filter = db::RecordFilter::of(key);
    records += database.count(filter);
    consider(database.best_script(key), key);
    filter.status = db::RecordStatus::kOk;
    for (db::StoredRecord& r : database.records(filter)) {
      if (r.record.script.empty() && r.record.kernel_hash == default_hash) consider(std::move(r), key);
    }
  }
  if (!best) {
    throw UserError(fmt::format("{} has {} CUDA record{} of problem {} ({}) and none verified of a tuned script or "
                                "of today's default schedule: tune it first on the GPU (`dragon tune --suite {} --problems {} --db {}`)",
                                options.db, records, records == 1 ? "" : "s", kernel.problem.name, kernel.spec,
                                options.suite, kernel.problem.id, options.db));
  }

  runtime::Generated generated =
      best->record.script.empty()
          ? std::move(default_generated)
          : runtime::generate(schedule::replay(script::decode(best->record.script), workload.func).func(), target);
  kernel.source = std::get<codegen::CudaSource>(std::move(generated.source));
  kernel.provenance = fmt::format("record {} of {} ({}), {} on {}, {:.4g} ms median of {} samples",
                                  best->id, options.db,
                                  best->record.script.empty() ? "the default schedule" : "a tuned script",
                                  best_key.target.describe(), best_key.hardware.describe(),
                                  *best->record.median_ms(), best->record.samples_ms.size());
  return kernel;
}

}  // namespace dragon::bench
