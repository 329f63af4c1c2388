// Compiled CPU code of every op kind, unscheduled and under random CPU-style schedules,
// against the interpreter on the same inputs. All functions of a test go into one shared
// object (one compiler run) through the compile cache.
#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "unit/schedule/random_trace.h"

namespace dragon::codegen {
namespace {

using testing::default_op_specs;
using testing::outputs_match;
using testing::test_cache;

struct Case {
  std::string label;
  ir::PrimFunc original;   // the reference runs this, unscheduled
  ir::PrimFunc scheduled;
  double tolerance_scale = 1;
};

void expect_lowered_cases_match(const std::vector<Case>& cases, const std::vector<ir::PrimFunc>& flats,
                                const std::string& optimization);

// Lowers every case for the CPU, compiles them as one batch, runs each on seeded inputs
// and compares with the interpreter running the unscheduled function.
void expect_cases_match(const std::vector<Case>& cases, const std::string& optimization = "-O2") {
  std::vector<Case> lowered_cases;
  std::vector<ir::PrimFunc> flats;
  for (const Case& c : cases) {
    try {
      flats.push_back(lower::lower(c.scheduled, lower::Target::cpu()).func);
      lowered_cases.push_back(c);
    } catch (const Error& e) {
      ADD_FAILURE() << c.label << ": lowering failed: " << e.what();
    }
  }
  expect_lowered_cases_match(lowered_cases, flats, optimization);
}

void expect_lowered_cases_match(const std::vector<Case>& cases, const std::vector<ir::PrimFunc>& flats,
                                const std::string& optimization) {
  runtime::BuildOptions options;
  options.cpu.optimization = optimization;
  options.cache = &test_cache();
  auto executables = runtime::build_cpu_batch(flats, options);
  ASSERT_EQ(executables.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].label);
    ASSERT_TRUE(executables[i].ok()) << executables[i].error().describe();
    std::vector<tensor::HostTensor> args = interp::make_arguments(cases[i].original, 7, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> reference = args;
    interp::run(cases[i].original, reference);
    Status status = executables[i].value()->run(args);
    ASSERT_TRUE(status.ok()) << status.error().describe();
    EXPECT_TRUE(outputs_match(cases[i].original, reference, args, cases[i].tolerance_scale));
  }
}

TEST(CpuCodegenOps, EveryOpKindUnscheduledMatchesInterpreter) {
  std::vector<Case> cases;
  for (const std::string& spec : default_op_specs()) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    cases.push_back({spec, w.func, w.func});
  }
  ASSERT_GE(cases.size(), 68u);
  expect_cases_match(cases);
}

// Random CPU-style schedules of the op kinds at positions first, first + 2, ...: two
// halves, so that ctest can compile them in parallel.
void expect_random_schedules_match(size_t first) {
  std::vector<Case> cases;
  schedule::testing::RandomTraceOptions options;
  options.style = schedule::testing::TargetStyle::kCpu;
  options.steps = 8;
  std::vector<std::string> specs = default_op_specs();
  for (size_t i = first; i < specs.size(); i += 2) {
    ops::Workload w = ops::OpRegistry::global().make_workload(specs[i]);
    uint64_t seed = 100 + i;
    schedule::testing::RandomTraceStats stats;
    schedule::Schedule sch = schedule::testing::random_schedule(w.func, seed, options, &stats);
    // A reassociated reduction agrees within rounding, like any reordered float sum.
    cases.push_back({specs[i] + " seed " + std::to_string(seed), w.func, sch.func(), stats.reassociated ? 10.0 : 1.0});
  }
  // -O1: these check what the code computes; the compiler's time grows with random
  // schedules' unrolled nests.
  expect_cases_match(cases, "-O1");
}

TEST(CpuCodegenOps, RandomCpuSchedulesOfEvenOpKindsMatchInterpreter) { expect_random_schedules_match(0); }
TEST(CpuCodegenOps, RandomCpuSchedulesOfOddOpKindsMatchInterpreter) { expect_random_schedules_match(1); }

}  // namespace
}  // namespace dragon::codegen
