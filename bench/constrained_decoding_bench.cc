// Constrained decoding cost per generated token, and the tokenizer's figures. The
// generation benchmark replays a real GEMM script (the SSSRRSRS sketch with sampled
// decisions) token by token through a fresh decoder, as a model would produce it: one
// allowed_tokens() call per token, each prefix extending the last. Also: the same call
// repeated on one prefix (cached), encoding speed, and tokens per prompt and per script
// for GEMM, conv2d and softmax. Not a model benchmark.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "dragon/decode/constrained_decoder.h"
#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/script/tokenizer.h"
#include "unit/script/tokenizer/workload_traces.h"

namespace dragon::script {
namespace {

using decode::ConstrainedDecoder;
using decode::ConstrainedDecoderSettings;

const Tokenizer& tok() { return Tokenizer::standard(); }

struct Family {
  const char* name;
  std::vector<std::string> specs;
};

std::vector<Family> families() {
  return {{"gemm", testing::gemm_specs()}, {"conv2d", testing::conv2d_specs()}, {"softmax", testing::softmax_specs()}};
}

// This thread's CPU time in microseconds: on a shared machine, wall time also counts the
// time other processes held the core.
double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// Generation: one call per token of a GEMM script (every position: line starts, operands,
// decisions, the end), fresh decoder per iteration, so nothing is cached across scripts.
// Per-call wall time (mean_us, median_us, ...) and CPU time (cpu_mean_us, ...). The
// no_shortcuts variants judge everything by trial applications (ConstrainedDecoderSettings):
// the same answers, for an A/B under the same load.
void BM_AllowedTokensWhileGenerating(benchmark::State& state, const std::string& spec, bool shortcuts = true) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<TokenId> tokens = tok().encode(encode(testing::workload_trace(spec, 1)));
  std::vector<double> wall_us, cpu_us;
  int64_t trials = 0;
  for (auto _ : state) {
    ConstrainedDecoder decoder(tok(), func, ConstrainedDecoderSettings{.shortcuts = shortcuts});
    for (size_t i = 0; i <= tokens.size(); ++i) {
      auto start = std::chrono::steady_clock::now();
      const double cpu_start = thread_cpu_us();
      std::vector<TokenId> allowed = decoder.allowed_tokens(std::span(tokens).first(i));
      cpu_us.push_back(thread_cpu_us() - cpu_start);
      wall_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      if (allowed.empty()) state.SkipWithError("the real script was rejected");
      benchmark::DoNotOptimize(allowed.data());
    }
    trials += decoder.stats().trial_applications;
  }
  auto report = [&](std::vector<double>& v, const std::string& prefix) {
    std::sort(v.begin(), v.end());
    auto pct = [&](double p) { return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))]; };
    double sum = 0;
    for (double x : v) sum += x;
    state.counters[prefix + "mean_us"] = sum / static_cast<double>(v.size());
    state.counters[prefix + "median_us"] = pct(0.5);
    state.counters[prefix + "p90_us"] = pct(0.9);
    state.counters[prefix + "p99_us"] = pct(0.99);
    state.counters[prefix + "max_us"] = v.back();
  };
  report(wall_us, "");
  report(cpu_us, "cpu_");
  state.counters["calls_per_script"] = static_cast<double>(tokens.size() + 1);
  state.counters["trials_per_call"] = static_cast<double>(trials) / static_cast<double>(wall_us.size());
}
BENCHMARK_CAPTURE(BM_AllowedTokensWhileGenerating, gemm_1024, std::string("matmul:m=1024,n=1024,k=1024"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllowedTokensWhileGenerating, gemm_64, std::string("matmul:m=64,n=64,k=64"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllowedTokensWhileGenerating, gemm_1024_no_shortcuts, std::string("matmul:m=1024,n=1024,k=1024"),
                  false)
    ->Unit(benchmark::kMillisecond);

// A long script in the style the shipped model writes when it runs on (hundreds of lines
// that look the same block and loops up again: `gb C`, `gl b40 13`, ...): the GEMM script
// above followed by `lookups` pairs of such lines, fed a token at a time. Per-call time
// of the first and the last 200 calls: a decoder whose cost per token grows with the
// script shows it as last_mean_us over first_mean_us.
std::string script_with_lookups(const std::string& spec, int lookups) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const schedule::Trace trace = testing::workload_trace(spec, 1);
  schedule::Schedule sch = schedule::replay(trace, func);
  const size_t loops = sch.get_loops(sch.get_block("C")).size();
  std::string text = encode(trace);
  LineDecoder lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.feed(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  const int64_t blocks = lines.defined(schedule::RVType::kBlock);
  for (int i = 0; i < lookups; ++i) {
    text += "gb C\ngl b" + std::to_string(blocks + i) + " " + std::to_string(loops) + "\n";
  }
  return text;
}

void BM_AllowedTokensLongScript(benchmark::State& state) {
  const std::string spec = "matmul:m=1024,n=1024,k=1024";
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<TokenId> tokens = tok().encode(script_with_lookups(spec, static_cast<int>(state.range(0))));
  std::vector<double> first_us, last_us;
  for (auto _ : state) {
    ConstrainedDecoder decoder(tok(), func);
    for (size_t i = 0; i <= tokens.size(); ++i) {
      const double start = thread_cpu_us();
      std::vector<TokenId> allowed = decoder.allowed_tokens(std::span(tokens).first(i));
      const double us = thread_cpu_us() - start;
      if (i < 200) first_us.push_back(us);
      if (i + 200 > tokens.size()) last_us.push_back(us);
      if (allowed.empty()) state.SkipWithError("the script was rejected");
      benchmark::DoNotOptimize(allowed.data());
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  state.counters["tokens"] = static_cast<double>(tokens.size());
  state.counters["first_cpu_mean_us"] = mean(first_us);
  state.counters["last_cpu_mean_us"] = mean(last_us);
}
BENCHMARK(BM_AllowedTokensLongScript)->Arg(100)->Arg(300)->Iterations(1)->Unit(benchmark::kMillisecond);

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
