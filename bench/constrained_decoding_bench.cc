// Constrained decoding cost per generated token, and the tokenizer's figures. The
// generation benchmark replays a real GEMM script (the SSSRRSRS sketch with sampled
// decisions) token by token through a fresh decoder, as a model would produce it: one
// allowed_tokens() call per token, each prefix extending the last. Also: the same call
// repeated on one prefix (cached), encoding speed, and tokens per prompt and per script
// for GEMM, conv2d and softmax. Not a model benchmark.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/constrained.h"
#include "dragon/script/script.h"
#include "dragon/script/tokenizer.h"
#include "unit/script/tokenizer/workload_traces.h"

namespace dragon::script {
namespace {

const Tokenizer& tok() { return Tokenizer::standard(); }

struct Family {
  const char* name;
  std::vector<std::string> specs;
};

std::vector<Family> families() {
  return {{"gemm", testing::gemm_specs()}, {"conv2d", testing::conv2d_specs()}, {"softmax", testing::softmax_specs()}};
}

// Generation: one call per token of a GEMM script, fresh decoder per iteration.
void BM_AllowedTokensWhileGenerating(benchmark::State& state, const std::string& spec) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<TokenId> tokens = tok().encode(encode(testing::workload_trace(spec, 1)));
  std::vector<double> per_call_us;
  for (auto _ : state) {
    ConstrainedDecoder decoder(tok(), func);
    for (size_t i = 0; i <= tokens.size(); ++i) {
      auto start = std::chrono::steady_clock::now();
      std::vector<TokenId> allowed = decoder.allowed_tokens(std::span(tokens).first(i));
      per_call_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      if (allowed.empty()) state.SkipWithError("the real script was rejected");
      benchmark::DoNotOptimize(allowed.data());
    }
  }
  std::sort(per_call_us.begin(), per_call_us.end());
  auto pct = [&](double p) { return per_call_us[static_cast<size_t>(p * (per_call_us.size() - 1))]; };
  double sum = 0;
  for (double v : per_call_us) sum += v;
  state.counters["calls_per_script"] = static_cast<double>(tokens.size() + 1);
  state.counters["mean_us_per_call"] = sum / per_call_us.size();
  state.counters["median_us"] = pct(0.5);
  state.counters["p90_us"] = pct(0.9);
  state.counters["p99_us"] = pct(0.99);
  state.counters["max_us"] = per_call_us.back();
}
BENCHMARK_CAPTURE(BM_AllowedTokensWhileGenerating, gemm_1024, std::string("matmul:m=1024,n=1024,k=1024"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllowedTokensWhileGenerating, gemm_64, std::string("matmul:m=64,n=64,k=64"))
    ->Unit(benchmark::kMillisecond);

// The same prefix asked again (everything cached): the floor of a call.
void BM_AllowedTokensCachedPrefix(benchmark::State& state) {
  const std::string spec = "matmul:m=1024,n=1024,k=1024";
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<TokenId> tokens = tok().encode(encode(testing::workload_trace(spec, 1)));
  const auto prefix = std::span(tokens).first(tokens.size() * 2 / 3);
  ConstrainedDecoder decoder(tok(), func);
  benchmark::DoNotOptimize(decoder.allowed_tokens(prefix));
  for (auto _ : state) benchmark::DoNotOptimize(decoder.allowed_tokens(prefix).data());
  state.counters["prefix_tokens"] = static_cast<double>(prefix.size());
}
BENCHMARK(BM_AllowedTokensCachedPrefix)->Unit(benchmark::kMicrosecond);

void BM_EncodePrompt(benchmark::State& state) {
  const std::string text = ir::print_function(ops::OpRegistry::global().make_workload("conv2d").func);
  for (auto _ : state) benchmark::DoNotOptimize(tok().encode(text).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_EncodePrompt)->Unit(benchmark::kMicrosecond);

// Tokens per prompt (canonical IR text of each shape) and per script (3 sampled traces
// per shape): the figures of the tokenizer's report, as counters.
void BM_TokenCounts(benchmark::State& state, const Family& family) {
  std::vector<size_t> prompt, script;
  for (auto _ : state) {
    prompt.clear();
    script.clear();
    for (const std::string& spec : family.specs) {
      prompt.push_back(tok().encode(ir::print_function(ops::OpRegistry::global().make_workload(spec).func)).size());
      for (int64_t seed = 1; seed <= 3; ++seed) script.push_back(tok().encode(encode(testing::workload_trace(spec, seed))).size());
    }
  }
  auto mean = [](const std::vector<size_t>& v) {
    double s = 0;
    for (size_t x : v) s += static_cast<double>(x);
    return s / static_cast<double>(v.size());
  };
  state.counters["vocab"] = static_cast<double>(tok().size());
  state.counters["prompts"] = static_cast<double>(prompt.size());
  state.counters["prompt_mean"] = mean(prompt);
  state.counters["prompt_max"] = static_cast<double>(*std::max_element(prompt.begin(), prompt.end()));
  state.counters["scripts"] = static_cast<double>(script.size());
  state.counters["script_mean"] = mean(script);
  state.counters["script_max"] = static_cast<double>(*std::max_element(script.begin(), script.end()));
}
BENCHMARK_CAPTURE(BM_TokenCounts, gemm, families()[0])->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TokenCounts, conv2d, families()[1])->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TokenCounts, softmax, families()[2])->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dragon::script

BENCHMARK_MAIN();
