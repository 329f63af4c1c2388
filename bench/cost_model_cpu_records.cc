// Measured CPU records for the cost model's ranking evaluation (issue 17), until the
// design space and the tuning database provide real ones: random CPU-style schedules of
// a few workloads (tests/unit/schedule/random_trace.h), each lowered, compiled with the
// host compiler (batches of 8 per compiler run, a failed batch again member by member),
// checked against the interpreter on the same inputs (a wrong program is recorded as
// failed, never timed) and timed in process:
// one warm-up call, then calls until 0.1 s or 200 calls, the minimum kept (the steadiest
// figure on a shared machine). Writes JSON Lines (search/measured_records.h).
//
//   bench_cost_model_cpu_records OUT.jsonl [CANDIDATES_PER_WORKLOAD=120] [SEED=1]
// OpenMP runs one thread (the program re-executes itself with OMP_NUM_THREADS=1 unless it
// is set: libgomp reads it when loaded, before main) so that parallel schedules do not
// time the machine's other users.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/measured_records.h"
#include "dragon/support/error.h"
#include "unit/schedule/random_trace.h"

namespace dragon {
namespace {

const std::vector<std::string> kWorkloads = {
    "matmul:m=128,n=128,k=128",
    "conv2d:batch=1,in_channels=16,out_channels=16,size=28x28",
    "softmax:shape=64x1024",
    "layer_norm:shape=32x1024,normalized_dims=1",
};
constexpr size_t kBatch = 8;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The minimum over repeated calls; nullopt with `error` set when a call fails.
std::optional<double> time_calls(const runtime::Executable& exe, std::vector<tensor::HostTensor> args,
                                 std::string& error) {
  Status warm = exe.run(args);
  if (!warm.ok()) {
    error = warm.error().describe();
    return std::nullopt;
  }
  double best = 1e30, total = 0;
  for (int call = 0; call < 200 && total < 0.1; ++call) {
    auto start = std::chrono::steady_clock::now();
    Status s = exe.run(args);
    const double t = seconds_since(start);
    if (!s.ok()) {
      error = s.error().describe();
      return std::nullopt;
    }
    best = std::min(best, t);
    total += t;
  }
  return best;
}

int run(const std::string& out_path, int per_workload, uint64_t seed) {
  std::ofstream out(out_path, std::ios::trunc);
  if (!out) throw UserError("cannot write " + out_path);
  const lower::Target cpu = lower::Target::cpu();
  schedule::testing::RandomTraceOptions options;
  options.style = schedule::testing::TargetStyle::kCpu;
  for (const std::string& spec : kWorkloads) {
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<tensor::HostTensor> inputs = interp::make_arguments(func, 7, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> expected = inputs;
    interp::run(func, expected);
    auto start = std::chrono::steady_clock::now();
    // Distinct scripts (the unscheduled one first): lowered functions to build.
    std::vector<std::string> scripts;
    std::vector<ir::PrimFunc> flats;
    std::set<std::string> seen;
    int measured = 0, failed = 0;
    for (uint64_t s = 0; static_cast<int>(scripts.size()) < per_workload && s < 20ull * per_workload; ++s) {
      schedule::Schedule sch = s == 0 ? schedule::Schedule(func) : schedule::testing::random_schedule(func, seed * 100003 + s, options);
      std::string script = script::encode(sch.trace());
      if (!seen.insert(script).second) continue;
      try {
        flats.push_back(lower::lower(sch.func(), cpu).func);
      } catch (const UserError&) {
        continue;
      }
      scripts.push_back(std::move(script));
    }
    for (size_t begin = 0; begin < flats.size(); begin += kBatch) {
      const size_t end = std::min(flats.size(), begin + kBatch);
      std::vector<ir::PrimFunc> batch(flats.begin() + static_cast<std::ptrdiff_t>(begin),
                                      flats.begin() + static_cast<std::ptrdiff_t>(end));
      auto built = runtime::build_cpu_batch(batch);
      // One member the compiler rejects fails the whole batch: build each alone then, so
      // only it is lost.
      if (built.size() > 1 && !built[0].ok()) {
        for (size_t k = 0; k < batch.size(); ++k) built[k] = std::move(runtime::build_cpu_batch({batch[k]})[0]);
      }
      for (size_t k = 0; k < built.size(); ++k) {
        search::MeasuredRecord record{spec, "cpu", scripts[begin + k], std::nullopt, ""};
        if (!built[k].ok()) {
          record.error = "build: " + built[k].error().describe();
        } else {
          const runtime::Executable& exe = *built[k].value();
          std::vector<tensor::HostTensor> args = inputs;
          Status s = exe.run(args);
          if (!s.ok()) {
            record.error = "run: " + s.error().describe();
          } else {
            for (size_t p = 0; p < func->params.size() && record.error.empty(); ++p) {
              if (func->params[p].role == ir::ParamRole::kInput) continue;
              interp::TensorComparison c =
                  interp::compare_tensors(expected[p], args[p], 4 * interp::reordering_tolerance(args[p].dtype()));
              if (!c.ok) record.error = "wrong output: " + interp::describe(c, expected[p], args[p]);
            }
            if (record.error.empty()) record.latency_s = time_calls(exe, inputs, record.error);
          }
        }
        (record.latency_s ? measured : failed) += 1;
        search::write_measured_record(out, record);
      }
      out.flush();
    }
    std::printf("%s: %d measured, %d failed, %.1f s\n", spec.c_str(), measured, failed, seconds_since(start));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    setenv("OMP_NUM_THREADS", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("re-executing with OMP_NUM_THREADS=1");
    return 1;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.jsonl [CANDIDATES_PER_WORKLOAD=120] [SEED=1]\n", argv[0]);
    return 1;
  }
  try {
    return dragon::run(argv[1], argc > 2 ? std::atoi(argv[2]) : 120, argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
