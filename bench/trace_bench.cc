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

namespace dragon::schedule {
namespace {

constexpr size_t kTraceLength = 60;

// The GEMM sketch of tests/unit/schedule/test_gemm_trace.cc (decisions for 64^3, repaired
// to 1024^3 perfect tiles), then Annotate instructions on its loops up to kTraceLength.
Trace gemm_trace(const ir::PrimFunc& func) {
  Schedule sch(func);
  BlockRV c = sch.get_block("C");
  BlockRV root = sch.get_block("root");
  sch.annotate(c, "meta_schedule.tiling_structure", std::string("SSSRRSRS"));
  std::vector<LoopRV> loops = sch.get_loops(c);
  auto tile = [&](LoopRV loop, int n, std::vector<int64_t> decision) {
    std::vector<ExprRV> f = sch.sample_perfect_tile(loop, n, 64, decision);
    return sch.split(loop, std::vector<SplitFactor>(f.begin(), f.end()));
  };
  std::vector<LoopRV> i = tile(loops[0], 5, {2, 1, 8, 2, 2});
  std::vector<LoopRV> j = tile(loops[1], 5, {4, 2, 4, 1, 2});
  std::vector<LoopRV> k = tile(loops[2], 3, {8, 2, 4});
  sch.reorder({i[0], j[0], i[1], j[1], i[2], j[2], k[0], k[1], i[3], j[3], k[2], i[4], j[4]});
  LoopRV bx = sch.fuse({i[0], j[0]});
  sch.bind(bx, "blockIdx.x");
  LoopRV vx = sch.fuse({i[1], j[1]});
  sch.bind(vx, "vthread.x");
  LoopRV tx = sch.fuse({i[2], j[2]});
  sch.bind(tx, "threadIdx.x");
  sch.annotate(c, "meta_schedule.thread_extent_low_inclusive", int64_t{16});
  sch.annotate(c, "meta_schedule.thread_extent_high_inclusive", int64_t{256});
  BlockRV c_local = sch.cache_write(c, 0, "local");
  sch.reverse_compute_at(c_local, tx, true, -1);
  for (int64_t index : {0, 1}) {
    BlockRV shared = sch.cache_read(c, index, "shared", {c});
    sch.compute_at(shared, k[0], true, -1);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    ExprRV v = sch.sample_categorical({1, 2, 3, 4}, {0.25, 0.25, 0.25, 0.25}, index == 0 ? 1 : 3);
    sch.annotate(shared, "meta_schedule.cooperative_fetch", v);
  }
  ExprRV unroll = sch.sample_categorical({0, 16, 64, 512, 1024}, {0.2, 0.2, 0.2, 0.2, 0.2}, 2);
  sch.annotate(root, "meta_schedule.unroll_explicit", unroll);
  std::vector<LoopRV> inner = sch.get_loops(c);
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
