// Per-store feature extraction time per candidate (issue 17: search scores thousands of
// candidates per iteration; target well under 1 ms), and the XGBoost model's prediction
// time per candidate. Families, each timed as "prepare+extract" (what the cost model
// pays: the feature passes and the walk), "extract" (the walk alone on prepared IR) and
// "lower" (the full lowering pipeline, for scale):
//   cuda/gemm1024_sketch     fp32 GEMM 1024^3, MetaSchedule's sketch with postprocessors
//   cuda/conv2d_autobind     conv2d 16x64x56x56 -> 64, 3x3 (a ResNet layer), AutoBind
//   cuda/<op>_random_gpu     GEMM and that conv under random GPU-style traces + AutoBind
//   cpu/<op>_random_cpu      the same under random CPU-style traces
// Candidates are scheduled once, outside the timed loop, and taken round robin.
//
//   bench_cost_model [--benchmark_filter=...]   (Google Benchmark flags)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dragon/ir/verify.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/program_features.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/search/rewrite_unroll.h"
#include "dragon/support/error.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/random_trace.h"

namespace dragon {
namespace {

using schedule::Schedule;

constexpr const char* kGemm = "matmul:m=1024,n=1024,k=1024";
constexpr const char* kConv2d = "conv2d:batch=16,in_channels=64,out_channels=64,size=56x56";
constexpr uint64_t kRandomSeeds = 16;

ir::PrimFunc workload(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

ir::PrimFunc gemm_sketch() {
  Schedule sch(workload(kGemm));
  schedule::testing::GemmSketchDecisions d;
  d.i = {8, 1, 16, 2, 4};
  d.j = {8, 1, 16, 2, 4};
  d.k = {64, 4, 4};
  d.unroll = 2;  // 64
  schedule::testing::apply_gemm_sketch(sch, d);
  sch.enter_postproc();
  if (search::rewrite_cooperative_fetch(sch) != 2) throw InternalError("the GEMM sketch has two shared copies");
  search::rewrite_unroll(sch);
  return sch.func();
}

ir::PrimFunc autobind(const std::string& spec) {
  Schedule sch(workload(spec));
  search::auto_bind(sch);
  return sch.func();
}

// Random schedules that lower for `target` (those are the ones a search would score).
std::vector<ir::PrimFunc> random_candidates(const std::string& spec, const lower::Target& target) {
  schedule::testing::RandomTraceOptions options;
  options.style = target.is_gpu() ? schedule::testing::TargetStyle::kGpu : schedule::testing::TargetStyle::kCpu;
  std::vector<ir::PrimFunc> kept;
  const ir::PrimFunc func = workload(spec);
  for (uint64_t seed = 1; seed <= kRandomSeeds; ++seed) {
    Schedule sch = schedule::testing::random_schedule(func, seed, options);
    if (target.is_gpu()) search::auto_bind(sch);
    try {
      (void)lower::lower(sch.func(), target);
      kept.push_back(sch.func());
    } catch (const UserError&) {
    }
  }
  return kept;
}

enum class Stage { kPrepareExtract, kExtract, kLower };

void run_family(benchmark::State& state, const std::vector<ir::PrimFunc>& candidates, const lower::Target& target,
                Stage stage) {
  if (candidates.empty()) {
    state.SkipWithError("no candidate lowers");
    return;
  }
  std::vector<ir::PrimFunc> prepared;
  for (const ir::PrimFunc& c : candidates) prepared.push_back(search::prepare_for_features(c, target));
  size_t next = 0;
  int64_t rows = 0;
  for (auto _ : state) {
    const size_t n = next++ % candidates.size();
    switch (stage) {
      case Stage::kPrepareExtract: rows += search::extract_program_features(candidates[n], target).rows(); break;
      case Stage::kExtract: rows += search::extract_prepared_features(prepared[n], target).rows(); break;
      case Stage::kLower: benchmark::DoNotOptimize(lower::lower(candidates[n], target).func); break;
    }
  }
  state.counters["candidates"] = static_cast<double>(candidates.size());
  if (stage != Stage::kLower) {
    state.counters["rows/candidate"] = static_cast<double>(rows) / static_cast<double>(state.iterations());
  }
  state.SetLabel(ir::ir_checks_enabled() ? "IR checks on" : "IR checks off");
}

void register_family(const std::string& name, const std::vector<ir::PrimFunc>& candidates, const lower::Target& target) {
  for (auto [stage, stage_name] : {std::pair{Stage::kPrepareExtract, "prepare+extract"},
                                   std::pair{Stage::kExtract, "extract"}, std::pair{Stage::kLower, "lower"}}) {
    benchmark::RegisterBenchmark(fmt::format("{}/{}", name, stage_name).c_str(),
                                 [candidates, target, stage](benchmark::State& state) {
                                   run_family(state, candidates, target, stage);
                                 })
        ->Unit(benchmark::kMicrosecond);
  }
}

// XGBoost prediction per candidate, for a model trained on the GEMM sketch's rows scaled
// by up to 1.6% with latencies that follow the scale (something to learn, so the model
// keeps a realistic number of rounds; prediction time grows with rounds and depth).
void register_prediction(const ir::PrimFunc& candidate, const lower::Target& target) {
  benchmark::RegisterBenchmark("xgb_predict/batch64", [candidate, target](benchmark::State& state) {
    search::FeaturizedCandidate f;
    f.features = search::extract_program_features(candidate, target);
    f.workload = "gemm";
    f.target = target.to_string();
    std::vector<search::FeaturizedCandidate> train;
    for (int i = 0; i < 200; ++i) {
      search::FeaturizedCandidate c = f;
      for (float& v : c.features.values) v *= 1.0f + 0.001f * static_cast<float>(i % 17);
      c.latency_s = 1e-3 * (1 + i % 17);
      train.push_back(std::move(c));
    }
    search::XgbCostModel model;
    model.update(train);
    std::vector<search::FeaturizedCandidate> batch(64, f);
    for (auto _ : state) benchmark::DoNotOptimize(model.predict(batch));
    state.counters["rounds"] = model.rounds();
    state.counters["us/candidate"] = benchmark::Counter(64, benchmark::Counter::kIsIterationInvariantRate |
                                                                benchmark::Counter::kInvert);
  })->Unit(benchmark::kMicrosecond);
}

void register_all() {
  const lower::Target gpu = lower::Target::cuda_h200();
  const lower::Target cpu = lower::Target::cpu();
  const ir::PrimFunc sketch = gemm_sketch();
  register_family("cuda/gemm1024_sketch", {sketch}, gpu);
  register_family("cuda/conv2d_autobind", {autobind(kConv2d)}, gpu);
  for (auto [name, spec] : {std::pair{"gemm1024", kGemm}, std::pair{"conv2d", kConv2d}}) {
    register_family(fmt::format("cuda/{}_random_gpu", name), random_candidates(spec, gpu), gpu);
    register_family(fmt::format("cpu/{}_random_cpu", name), random_candidates(spec, cpu), cpu);
  }
  register_prediction(sketch, gpu);
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
