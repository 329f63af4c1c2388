// Lowering + code generation time per scheduled candidate (issue 5, Benchmarks: target
// under 2 ms), no compile: what a search pays per candidate before NVRTC or the host
// compiler. Scheduling happens once, outside the timed loop; each iteration lowers one
// candidate of a family (round robin) and prints it. Families:
//   cuda/gemm4096_tiled      fp32 GEMM 4096^3, the MetaSchedule sketch (shared tiles,
//                            cooperative fetch, vthreads, unroll 64)
//   cuda/gemm_tensor_core    f16 GEMM 128^3, the tensor-core sketch (mma.sync, ldmatrix)
//   cuda/<op>_autobind       softmax 16x16384, layer_norm 16x64x256x256 over the last 3
//                            dims, conv2d 16x3x256x256 -> 64 (KernelBench shapes), AutoBind
//   cuda/<op>_random_gpu     those ops and GEMM 4096^3 under random GPU-style traces
//                            (tiling, shared/local caches, binds, cooperative fetch)
//   cpu/<op>_random_cpu      the same ops under random CPU-style traces (parallel,
//                            vectorize, unroll, caches), lowered for and printed as C++
// and, per family, the stages alone (lower, codegen) beside both (lower+codegen).
//
//   bench_lower_codegen [--benchmark_filter=...]   (Google Benchmark flags)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dragon/codegen/cpu_codegen.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/ir/verify.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/search/rewrite_unroll.h"
#include "dragon/support/error.h"
#include "unit/schedule/random_trace.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"

namespace dragon {
namespace {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::Schedule;

constexpr const char* kGemm = "matmul:m=4096,n=4096,k=4096";
constexpr const char* kSoftmax = "softmax:shape=16x16384";
constexpr const char* kLayerNorm = "layer_norm:shape=16x64x256x256,normalized_dims=3";
constexpr const char* kConv2d = "conv2d:batch=16,in_channels=3,out_channels=64,size=256x256";
constexpr uint64_t kRandomCandidates = 16;  // seeds tried per op; those that lower are kept

ir::PrimFunc workload(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

// The MetaSchedule GEMM sketch (tests/unit/schedule/gemm_sketch.h) with decisions for
// 4096^3: 128x128 block tiles of 16x16 threads, 8x8 accumulators per thread, k tiles of
// 16, cooperative fetch of 2 and 4 floats, unroll limit 64; then its postprocessor.
ir::PrimFunc tiled_gemm_4096() {
  Schedule sch(workload(kGemm));
  schedule::testing::GemmSketchDecisions d;
  d.i = {32, 1, 16, 2, 4};
  d.j = {32, 1, 16, 2, 4};
  d.k = {256, 4, 4};
  d.unroll = 2;  // 64
  schedule::testing::apply_gemm_sketch(sch, d);
  sch.enter_postproc();
  if (search::rewrite_cooperative_fetch(sch) != 2) throw InternalError("the GEMM sketch has two shared copies");
  search::rewrite_unroll(sch);
  return sch.func();
}

ir::PrimFunc tensor_core_gemm() {
  Schedule sch = schedule::testing::tensorcore_gemm_sketch("matmul:m=128,n=128,k=128,dtype=f16");
  if (search::rewrite_cooperative_fetch(sch) != 2) throw InternalError("the tensor-core sketch has two shared copies");
  search::auto_bind(sch);
  return sch.func();
}

ir::PrimFunc autobind(const std::string& spec) {
  Schedule sch(workload(spec));
  search::auto_bind(sch);
  return sch.func();
}

bool lowers(const ir::PrimFunc& scheduled, const lower::Target& target) {
  try {
    ir::PrimFunc flat = lower::lower(scheduled, target).func;
    if (target.is_gpu()) {
      (void)codegen::generate_cuda(flat, target);
    } else {
      (void)codegen::generate_cpu(flat);
    }
    return true;
  } catch (const UserError&) {
    return false;  // a random schedule the target cannot run (too many threads, ...)
  }
}

// Random schedules of `spec` (seeds 1..kRandomCandidates) that lower and print for
// `target`; GPU ones get AutoBind on what the trace left unbound.
std::vector<ir::PrimFunc> random_candidates(const std::string& spec, const lower::Target& target) {
  schedule::testing::RandomTraceOptions options;
  options.style = target.is_gpu() ? schedule::testing::TargetStyle::kGpu : schedule::testing::TargetStyle::kCpu;
  std::vector<ir::PrimFunc> kept;
  ir::PrimFunc func = workload(spec);
  for (uint64_t seed = 1; seed <= kRandomCandidates; ++seed) {
    Schedule sch = schedule::testing::random_schedule(func, seed, options);
    if (target.is_gpu()) search::auto_bind(sch);
    if (lowers(sch.func(), target)) kept.push_back(sch.func());
  }
  return kept;
}

enum class Stage { kLower, kCodegen, kBoth };

std::string print(const ir::PrimFunc& flat, const lower::Target& target) {
  return target.is_gpu() ? codegen::generate_cuda(flat, target).code : codegen::generate_cpu(flat).code;
}

void run_family(benchmark::State& state, const std::vector<ir::PrimFunc>& candidates, const lower::Target& target,
                Stage stage) {
  if (candidates.empty()) {
    state.SkipWithError("no candidate lowers");
    return;
  }
  std::vector<ir::PrimFunc> flats;
  for (const ir::PrimFunc& c : candidates) flats.push_back(lower::lower(c, target).func);
  size_t next = 0, bytes = 0;
  for (auto _ : state) {
    size_t n = next++ % candidates.size();
    switch (stage) {
      case Stage::kLower: benchmark::DoNotOptimize(lower::lower(candidates[n], target).func); break;
      case Stage::kCodegen: bytes += print(flats[n], target).size(); break;
      case Stage::kBoth: bytes += print(lower::lower(candidates[n], target).func, target).size(); break;
    }
  }
  benchmark::DoNotOptimize(bytes);
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.SetLabel(ir::ir_checks_enabled() ? "IR checks on" : "IR checks off");
}

void register_family(const std::string& name, std::vector<ir::PrimFunc> candidates, const lower::Target& target) {
  for (auto [stage, stage_name] : {std::pair{Stage::kBoth, "lower+codegen"}, std::pair{Stage::kLower, "lower"},
                                   std::pair{Stage::kCodegen, "codegen"}}) {
    benchmark::RegisterBenchmark(fmt::format("{}/{}", name, stage_name).c_str(),
                                 [candidates, target, stage](benchmark::State& state) {
                                   run_family(state, candidates, target, stage);
                                 })
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_all() {
  const lower::Target gpu = lower::Target::cuda_h200();
  const lower::Target cpu = lower::Target::cpu();
  register_family("cuda/gemm4096_tiled", {tiled_gemm_4096()}, gpu);
  register_family("cuda/gemm_tensor_core", {tensor_core_gemm()}, gpu);
  register_family("cuda/softmax_autobind", {autobind(kSoftmax)}, gpu);
  register_family("cuda/layer_norm_autobind", {autobind(kLayerNorm)}, gpu);
  register_family("cuda/conv2d_autobind", {autobind(kConv2d)}, gpu);
  for (auto [name, spec] : {std::pair{"gemm4096", kGemm}, std::pair{"softmax", kSoftmax},
                            std::pair{"layer_norm", kLayerNorm}, std::pair{"conv2d", kConv2d}}) {
    register_family(fmt::format("cuda/{}_random_gpu", name), random_candidates(spec, gpu), gpu);
  }
  for (auto [name, spec] : {std::pair{"gemm4096", kGemm}, std::pair{"softmax", kSoftmax},
                            std::pair{"layer_norm", kLayerNorm}, std::pair{"conv2d", kConv2d}}) {
    register_family(fmt::format("cpu/{}_random_cpu", name), random_candidates(spec, cpu), cpu);
  }
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  dragon::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
