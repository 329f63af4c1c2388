// CPU cost of one candidate of the design space: a sketch replayed with fresh decisions
// plus the postprocessors (SketchSampler::sample), what search pays thousands of times per
// task; and, for scale, generating the design space once. GEMM 1024^3 f32 (SSSRRSRS
// tiling, shared and local caches), f16 on tensor cores, a softmax (cross-thread
// reduction) and the CPU GEMM. Failed candidates (rejected by verify_gpu_code) are
// counted, not excluded: they cost the same to find. BM_CandidateCpuWork_* adds what the
// tuner's measurer then does with each candidate the postprocessors passed (lower it and
// print its CUDA, runtime::generate): the CPU work per candidate that issue 17 bounds at
// 2 ms (schedule, lower, codegen), NVRTC apart.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "dragon/schedule/trace.h"

#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/support/error.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"

namespace dragon::search {
namespace {

struct Space {
  ir::PrimFunc func;
  lower::Target target;
  std::vector<Sketch> sketches;
};

Space make_space(const std::string& spec, const lower::Target& target) {
  Space s{ops::OpRegistry::global().make_workload(spec).func, target, {}};
  s.sketches = generate_design_space(s.func, target, RuleSet::for_target(target));
  return s;
}

// Samples candidates from sketch `index` (the last sketch when the space has fewer) with one
// SketchSampler, as the tuner draws fresh candidates (its construction, once per sketch and
// task, is not timed); with `lower_and_print`, each candidate that passed is also lowered
// and printed (runtime::generate), as the measurer does.
void sample(benchmark::State& state, const std::string& spec, const lower::Target& target, size_t index,
            bool lower_and_print = false) {
  Space space = make_space(spec, target);
  const Sketch& sketch = space.sketches.at(std::min(index, space.sketches.size() - 1));
  SketchSampler sampler(sketch, space.func, target, RuleSet::for_target(target));
  int64_t seed = 1, ok = 0, printed = 0;
  for (auto _ : state) {
    CandidateResult r = sampler.sample(seed++);
    ok += r.ok() ? 1 : 0;
    if (r.ok() && lower_and_print) {
      try {
        benchmark::DoNotOptimize(runtime::generate(r.candidate().func, target));
        ++printed;
      } catch (const UserError&) {  // lowering refused it: the measurer records that, at this cost
      }
    }
    benchmark::DoNotOptimize(r);
  }
  const auto share = [&](int64_t n) { return static_cast<double>(n) / static_cast<double>(state.iterations()); };
  state.counters["ok_fraction"] = share(ok);
  if (lower_and_print) state.counters["printed_fraction"] = share(printed);
  state.counters["trace"] = static_cast<double>(sketch.trace.size());
  state.SetLabel(spec + " sketch: " + (sketch.applied.empty() ? std::string("-") : sketch.applied.front()));
}

// A sampled candidate's CPU work on CUDA: its schedule, lowering and CUDA.
void sample_lower_print(benchmark::State& state, const std::string& spec, size_t index) {
  sample(state, spec, lower::Target::cuda_h200(), index, /*lower_and_print=*/true);
}

void BM_CandidateCpuWork_Gemm1024_F32_TensorCore(benchmark::State& state) {
  sample_lower_print(state, "matmul:m=1024,n=1024,k=1024", 0);
}
void BM_CandidateCpuWork_Gemm1024_F16_Wgmma(benchmark::State& state) {
  sample_lower_print(state, "matmul:m=1024,n=1024,k=1024,dtype=f16", 0);
}
void BM_CandidateCpuWork_Gemm1024_F32_Tiled(benchmark::State& state) {
  sample_lower_print(state, "matmul:m=1024,n=1024,k=1024", 1);
}
void BM_CandidateCpuWork_Softmax(benchmark::State& state) { sample_lower_print(state, "softmax:shape=4096x4096,axis=1", 0); }
void BM_CandidateCpuWork_Conv2d_TensorCore(benchmark::State& state) {
  sample_lower_print(state, "conv2d:batch=16,in_channels=64,out_channels=128,size=56x56,kernel=3x3,padding=1x1", 0);
}

// What evolutionary search pays per program it scores: a candidate's trace replayed with
// its decisions and postprocessed again (replay_candidate, as RuleSpace realizes mutated
// traces and stored records), for 16 candidates sampled beforehand, in turn. On the H100
// host the tuner reported 2.4-3.1 ms a program over ten DLRM problems and about 26 programs
// scored per measured candidate (bench/results/2026-12-07-h100-session23.md).
void replay(benchmark::State& state, const std::string& spec, size_t index) {
  const lower::Target target = lower::Target::cuda_h200();
  Space space = make_space(spec, target);
  const Sketch& sketch = space.sketches.at(std::min(index, space.sketches.size() - 1));
  const RuleSet& rules = RuleSet::for_target(target);
  SketchSampler sampler(sketch, space.func, target, rules);
  std::vector<schedule::Trace> traces;
  for (int64_t seed = 1; traces.size() < 16 && seed < 1000; ++seed) {
    CandidateResult r = sampler.sample(seed);
    if (r.ok()) traces.push_back(r.candidate().trace);
  }
  if (traces.empty()) throw InternalError("no candidate of " + spec + " to replay");
  size_t next = 0;
  int64_t ok = 0;
  for (auto _ : state) {
    CandidateResult r = replay_candidate(traces[next++ % traces.size()], space.func, target, rules);
    ok += r.ok() ? 1 : 0;
    benchmark::DoNotOptimize(r);
  }
  state.counters["ok_fraction"] = static_cast<double>(ok) / static_cast<double>(state.iterations());
  state.SetLabel(spec);
}

void BM_ReplayCandidate_Gemm1024_F32_TensorCore(benchmark::State& state) {
  replay(state, "matmul:m=1024,n=1024,k=1024", 0);
}
void BM_ReplayCandidate_Softmax(benchmark::State& state) { replay(state, "softmax:shape=4096x4096,axis=1", 0); }
void BM_ReplayCandidate_Conv2d_TensorCore(benchmark::State& state) {
  replay(state, "conv2d:batch=16,in_channels=64,out_channels=128,size=56x56,kernel=3x3,padding=1x1", 0);
}

void BM_SampleCandidate_Gemm1024_F32_Cuda(benchmark::State& state) {
  sample(state, "matmul:m=1024,n=1024,k=1024", lower::Target::cuda_h200(), 0);
}
void BM_SampleCandidate_Gemm1024_F16_TensorCore(benchmark::State& state) {
  sample(state, "matmul:m=1024,n=1024,k=1024,dtype=f16", lower::Target::cuda_h200(), 0);
}
void BM_SampleCandidate_Softmax_Cuda(benchmark::State& state) {
  sample(state, "softmax:shape=4096x4096,axis=1", lower::Target::cuda_h200(), 0);
}
void BM_SampleCandidate_Gemm1024_F32_Cpu(benchmark::State& state) {
  sample(state, "matmul:m=1024,n=1024,k=1024", lower::Target::cpu(), 1);
}

void BM_GenerateDesignSpace_Gemm1024_F16_Cuda(benchmark::State& state) {
  ir::PrimFunc func = ops::OpRegistry::global().make_workload("matmul:m=1024,n=1024,k=1024,dtype=f16").func;
  for (auto _ : state) {
    benchmark::DoNotOptimize(generate_design_space(func, lower::Target::cuda_h200(), RuleSet::cuda()));
  }
}

BENCHMARK(BM_SampleCandidate_Gemm1024_F32_Cuda)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleCandidate_Gemm1024_F16_TensorCore)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleCandidate_Softmax_Cuda)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleCandidate_Gemm1024_F32_Cpu)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GenerateDesignSpace_Gemm1024_F16_Cuda)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CandidateCpuWork_Gemm1024_F32_TensorCore)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CandidateCpuWork_Gemm1024_F16_Wgmma)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CandidateCpuWork_Gemm1024_F32_Tiled)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CandidateCpuWork_Softmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CandidateCpuWork_Conv2d_TensorCore)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplayCandidate_Gemm1024_F32_TensorCore)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplayCandidate_Softmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplayCandidate_Conv2d_TensorCore)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dragon::search

BENCHMARK_MAIN();
