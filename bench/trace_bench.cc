// Time to replay a recorded trace onto an unscheduled function: the MetaSchedule-style
// CUDA GEMM sketch (tiling SSSRRSRS, binds, caches, annotations) on matmul 1024^3, padded
// with Annotate instructions to 60. Not an IR-verifier benchmark: checks follow the build
// (off in release unless DRAGON_VERIFY_IR=1; the label says which).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/verify.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace_json.h"
#include "unit/schedule/gemm_sketch.h"

namespace dragon::schedule {
namespace {

constexpr size_t kTraceLength = 60;

// The GEMM sketch of tests/unit/schedule/test_gemm_trace.cc (decisions for 64^3, repaired
// to 1024^3 perfect tiles), then Annotate instructions on its loops up to kTraceLength.
Trace gemm_trace(const ir::PrimFunc& func) {
  Schedule sch(func);
  testing::apply_gemm_sketch(sch);
  std::vector<LoopRV> inner = sch.get_loops(sch.get_block("C"));
  for (int pad = 0; sch.trace().size() + 1 < kTraceLength; ++pad) {
    sch.annotate(inner[pad % inner.size()], "bench.pad_" + std::to_string(pad), int64_t{pad});
  }
  sch.enter_postproc();
  return sch.trace();
}

void BM_ReplayGemmTrace(benchmark::State& state) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload("matmul:m=1024,n=1024,k=1024").func;
  // Built once, then decoded from JSON as a tuner would load it from its database.
  const Trace trace = trace_from_json(trace_to_json(gemm_trace(func)));
  if (trace.size() != kTraceLength) {
    state.SkipWithError(("trace has " + std::to_string(trace.size()) + " instructions").c_str());
    return;
  }
  benchmark::DoNotOptimize(replay(trace, func).func());  // warm-up
  for (auto _ : state) {
    Schedule sch = replay(trace, func);
    benchmark::DoNotOptimize(sch.func());
  }
  state.counters["instructions"] = static_cast<double>(trace.size());
  state.counters["instructions_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(trace.size()), benchmark::Counter::kIsRate);
  state.SetLabel(ir::ir_checks_enabled() ? "IR checks on" : "IR checks off");
}
BENCHMARK(BM_ReplayGemmTrace)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dragon::schedule

BENCHMARK_MAIN();
