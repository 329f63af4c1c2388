// Throughput of the reference interpreter on plain loop nests (unscheduled TE functions).
// Not a kernel benchmark: it tells how long checking a schedule on the CPU takes.
//
// Counting: a "scalar op" is one load, one store or one arithmetic/compare operation on
// element values, per innermost iteration; index arithmetic, casts between equal types,
// loop and block bookkeeping are not counted (so the figure is conservative).
//   add:     C[i] = A[i] + B[i]                          2 loads + 1 add + 1 store = 4
//   matmul:  C[i,j] = C[i,j] + A[i,k] * B[k,j]           3 loads + mul + add + store = 6
//   stencil: O[i,j] = O[i,j] + I[i+di,j+dj] * W[di,dj]   3 loads + mul + add + store = 6
// Bytes are the element bytes those loads and stores touch.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ops/op_registry.h"
#include "dragon/ops/te.h"

namespace dragon::interp {
namespace {

using ir::DataType;
using tensor::HostTensor;

void run_counted(benchmark::State& state, const ir::PrimFunc& func, int64_t inner_iterations, int64_t ops_per_iteration,
                 int64_t bytes_per_iteration) {
  CompiledFunction compiled = CompiledFunction::compile(func);
  std::vector<HostTensor> args = make_arguments(func, 1, Distribution::kNormal);
  compiled.run(args);  // warm-up: first touch of every page
  for (auto _ : state) {
    compiled.run(args);
    benchmark::DoNotOptimize(args.back().data());
  }
  double iterations = static_cast<double>(state.iterations()) * static_cast<double>(inner_iterations);
  state.counters["scalar_ops_per_s"] =
      benchmark::Counter(iterations * static_cast<double>(ops_per_iteration), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(iterations) * bytes_per_iteration);
}

void BM_ElementwiseAdd(benchmark::State& state) {
  const int64_t n = 1 << 20;
  ops::FunctionBuilder fb("add");
  ops::Tensor a = fb.input("A", DataType::f32(), {n});
  ops::Tensor b = fb.input("B", DataType::f32(), {n});
  ops::Tensor c = fb.compute("C", {n}, [&](const ops::IndexVars& i) { return a(i[0]) + b(i[0]); });
  run_counted(state, fb.build({c}), n, 4, 12);
}
BENCHMARK(BM_ElementwiseAdd)->Unit(benchmark::kMillisecond);

void BM_Matmul(benchmark::State& state) {
  ops::Workload w = ops::OpRegistry::global().make_workload("matmul:m=128,n=128,k=128,dtype=f32");
  run_counted(state, w.func, int64_t{128} * 128 * 128, 6, 16);
}
BENCHMARK(BM_Matmul)->Unit(benchmark::kMillisecond);

void BM_Stencil3x3(benchmark::State& state) {
  const int64_t h = 256, w = 256;
  ops::FunctionBuilder fb("stencil");
  ops::Tensor in = fb.input("I", DataType::f32(), {h, w});
  ops::Tensor weight = fb.input("W", DataType::f32(), {3, 3});
  ops::Tensor out = fb.reduce("O", {h - 2, w - 2}, {3, 3}, DataType::f32(), ops::Reducer::sum(),
                              [&](const ops::IndexVars& i, const ops::IndexVars& r) {
                                return in(i[0] + r[0], i[1] + r[1]) * weight(r[0], r[1]);
                              });
  run_counted(state, fb.build({out}), (h - 2) * (w - 2) * 9, 6, 16);
}
BENCHMARK(BM_Stencil3x3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dragon::interp

BENCHMARK_MAIN();
