// NVRTC's time for the candidates search actually draws, not hand-written variants: on the
// H200 host, a 256^3 f32 GEMM's tuning candidates cost 415 ms of compile wall each on 15
// children (bench/results/2026-12-05-h200-tuning-children.md), while the hand-written GEMM
// variants of bench_nvrtc_throughput compile in about 21 ms. This samples N candidates of a
// spec's CUDA design space (sketch i % sketches, seed i + 1, the tuner's postprocessors),
// compiles each alone with NVRTC into a fresh cache (serially, one thread), and prints per
// candidate its sketch, code size and compile time, then the distribution and the slowest
// candidates' scripts: what makes a candidate expensive to build. Needs NVRTC, not a GPU.
//
//   bench_candidate_compile SPEC [N [DIR]]   (N default 24; DIR: each candidate's CUDA source
//                                             written there as candidate-<i>.cu, to read why it
//                                             is expensive)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/search/rule_set.h"

namespace dragon {
namespace {

// The largest N of the script's "ann LOOP autounroll N" lines.
int64_t largest_auto_unroll(const std::string& script) {
  int64_t largest = 0;
  size_t at = 0;
  while ((at = script.find(" autounroll ", at)) != std::string::npos) {
    at += 12;
    largest = std::max<int64_t>(largest, std::strtoll(script.c_str() + at, nullptr, 10));
  }
  return largest;
}

struct Measured {
  size_t index = 0;
  std::string sketch;
  size_t code_bytes = 0;
  double compile_ms = 0;
  bool ok = false;
  std::string script;
  int64_t unroll = 0;
};

int run(const std::string& spec, int count, const std::string& dump_dir) {
  if (!runtime::nvrtc_available()) {
    std::fprintf(stderr, "bench_candidate_compile: this build has no NVRTC\n");
    return 1;
  }
  const lower::Target target = lower::Target::cuda_h200();
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const search::RuleSet& rules = search::RuleSet::for_target(target);
  const std::vector<search::Sketch> sketches = search::generate_design_space(func, target, rules);
  if (sketches.empty()) {
    std::fprintf(stderr, "bench_candidate_compile: %s has no CUDA design space\n", spec.c_str());
    return 1;
  }
  const std::filesystem::path cache_dir =
      std::filesystem::temp_directory_path() / fmt::format("dragon-candidate-compile-{}", ::getpid());
  std::filesystem::remove_all(cache_dir);
  runtime::CompileCache cache(cache_dir.string());
  runtime::NvrtcOptions nvrtc;
  nvrtc.arch = target.arch;
  fmt::print("{}: {} sketches; {} candidates, each compiled alone (one NVRTC program, one thread)\n\n", spec,
             sketches.size(), count);
  // unroll: the largest auto-unroll step the candidate's script annotates (0: none), the
  // draw that most often makes a compile expensive.
  fmt::print("| # | sketch | unroll | CUDA bytes | compile ms | built |\n|---:|---|---:|---:|---:|---|\n");
  std::vector<Measured> all;
  for (int i = 0; i < count; ++i) {
    const search::Sketch& sketch = sketches[static_cast<size_t>(i) % sketches.size()];
    search::CandidateResult r = search::sample_candidate(sketch, func, target, rules, i + 1);
    if (!r.ok()) {
      fmt::print("| {} | {} | - | - | - | refused: {} |\n", i, sketch.applied.front(), fmt::format("{}: {}", r.failure().stage, r.failure().message));
      continue;
    }
    Measured m;
    m.index = static_cast<size_t>(i);
    for (const std::string& a : sketch.applied) m.sketch += (m.sketch.empty() ? "" : " ") + a;
    m.script = script::encode(r.candidate().trace);
    m.unroll = largest_auto_unroll(m.script);
    runtime::Generated generated;
    try {
      generated = runtime::generate(r.candidate().func, target);
    } catch (const Error& e) {
      fmt::print("| {} | {} | {} | - | - | lowering refused: {} |\n", i, m.sketch, m.unroll, e.what());
      continue;
    }
    m.code_bytes = generated.code().size();
    if (!dump_dir.empty()) {
      std::filesystem::create_directories(dump_dir);
      std::ofstream(std::filesystem::path(dump_dir) / fmt::format("candidate-{}.cu", i)) << generated.code();
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<Expected<runtime::Cubin>> cubins = runtime::nvrtc_compile_all({generated.code()}, nvrtc, cache, 1);
    m.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    m.ok = cubins.front().ok();
    fmt::print("| {} | {} | {} | {} | {:.1f} | {} |\n", i, m.sketch, m.unroll, m.code_bytes, m.compile_ms,
               m.ok ? "yes" : "no");
    std::fflush(stdout);
    all.push_back(std::move(m));
  }
  std::filesystem::remove_all(cache_dir);
  if (all.empty()) {
    std::fprintf(stderr, "bench_candidate_compile: no candidate could be sampled\n");
    return 1;
  }
  std::vector<double> ms;
  double total = 0;
  for (const Measured& m : all) {
    ms.push_back(m.compile_ms);
    total += m.compile_ms;
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))]; };
  fmt::print("\n{} compiled: median {:.1f} ms, p90 {:.1f} ms, max {:.1f} ms, mean {:.1f} ms; the slowest tenth takes {:.0f}% "
             "of the time\n",
             all.size(), at(0.5), at(0.9), ms.back(), total / static_cast<double>(all.size()),
             [&] {
               double slow = 0;
               for (size_t k = ms.size() - std::max<size_t>(1, ms.size() / 10); k < ms.size(); ++k) slow += ms[k];
               return 100 * slow / total;
             }());
  std::sort(all.begin(), all.end(), [](const Measured& a, const Measured& b) { return a.compile_ms > b.compile_ms; });
  for (size_t k = 0; k < std::min<size_t>(2, all.size()); ++k) {
    fmt::print("\nslowest #{}: candidate {} ({:.1f} ms, {} bytes of CUDA)\n{}\n", k + 1, all[k].index, all[k].compile_ms,
               all[k].code_bytes, all[k].script);
  }
  return 0;
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s SPEC [N >= 1 [DUMP_DIR]]\n", argv[0]);
    return 2;
  }
  const int count = argc > 2 ? std::atoi(argv[2]) : 24;
  if (count < 1) {
    std::fprintf(stderr, "usage: %s SPEC [N >= 1 [DUMP_DIR]]\n", argv[0]);
    return 2;
  }
  try {
    return dragon::run(argv[1], count, argc > 3 ? argv[3] : "");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_candidate_compile: %s\n", e.what());
    return 1;
  }
}
