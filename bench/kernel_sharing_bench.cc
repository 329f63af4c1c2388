// What defining each distinct kernel once saves NVRTC in the tuner's batched programs: N
// candidates of a spec's CUDA design space (sketch i % sketches, seed i + 1, the tuner's
// postprocessors), lowered, duplicates dropped (the tuner measures a printed kernel once),
// cut into programs of PER_PROGRAM consecutive candidates as compile_cuda_batch cuts them;
// each program compiled by NVRTC on one thread (no cache) twice: with the kernels members
// share defined once (CudaProgramBatch's default) and with every member's kernels, and
// shared once more with the candidates ordered by their kernels first, as the GPU
// measurer orders a round's (gpu_tuning.cc); the modes alternate, each run twice. Prints per mode the kernel definitions compiled and
// the faster run's NVRTC time. Needs NVRTC, not a GPU.
//
//   bench_kernel_sharing SPEC [N [PER_PROGRAM]]   (defaults 48 and 16; a tuning round of 128
//                                                 candidates on 15 compilers makes programs of 4)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/search/rule_set.h"
#include "dragon/support/error.h"

namespace dragon {
namespace {

struct ModeResult {
  size_t kernels = 0;  // definitions NVRTC compiled
  double ms = 0;
  size_t failed = 0;
};

ModeResult compile_programs(const std::vector<ir::PrimFunc>& flats, size_t per_program, bool share) {
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<runtime::CudaProgramBatch::Range> ranges;
  for (size_t begin = 0; begin < flats.size(); begin += per_program) {
    ranges.push_back({begin, std::min(begin + per_program, flats.size())});
  }
  runtime::CudaProgramBatch batch(flats, target, ranges, share);
  runtime::NvrtcOptions nvrtc;
  nvrtc.arch = target.arch;
  ModeResult result;
  for (size_t p = 0; p < batch.size(); ++p) {
    const std::string& code = batch.code(p);
    // An empty cache of its own per compile, so every compile is NVRTC's.
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("dragon-kernel-sharing-{}", ::getpid());
    std::filesystem::remove_all(dir);
    runtime::CompileCache cache(dir.string());
    const auto start = std::chrono::steady_clock::now();
    std::vector<Expected<runtime::Cubin>> cubins = runtime::nvrtc_compile_all({code}, nvrtc, cache, 1);
    result.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::filesystem::remove_all(dir);
    result.failed += cubins.front().ok() ? 0 : 1;
    for (auto& build : batch.finish(p, std::move(cubins.front()))) (void)build;
  }
  result.kernels = batch.kernels_defined();
  return result;
}

int run(const std::string& spec, int count, int per_program) {
  if (!runtime::nvrtc_available()) {
    std::fprintf(stderr, "bench_kernel_sharing: this build has no NVRTC\n");
    return 1;
  }
  const lower::Target target = lower::Target::cuda_h200();
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const search::RuleSet& rules = search::RuleSet::for_target(target);
  const std::vector<search::Sketch> sketches = search::generate_design_space(func, target, rules);
  if (sketches.empty()) throw UserError(spec + " has no CUDA design space");
  std::vector<ir::PrimFunc> flats;
  std::vector<std::vector<size_t>> keys;  // per flat, its kernels' definition hashes
  std::set<std::string> printed;
  for (int i = 0; i < count; ++i) {
    search::CandidateResult r =
        search::sample_candidate(sketches[static_cast<size_t>(i) % sketches.size()], func, target, rules, i + 1);
    if (!r.ok()) continue;
    try {
      runtime::Generated generated = runtime::generate(r.candidate().func, target);
      if (!printed.insert(generated.code()).second) continue;
      flats.push_back(generated.lowered);
      keys.push_back(codegen::kernel_definition_hashes(std::get<codegen::CudaSource>(generated.source)));
    } catch (const Error&) {
      continue;  // lowering refused it: the tuner would not compile it either
    }
  }
  // The order the GPU measurer gives a round's candidates (gpu_tuning.cc): by their kernels.
  std::vector<size_t> order(flats.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<ir::PrimFunc> by_kernels;
  for (size_t i : order) by_kernels.push_back(flats[i]);
  // What no cut into programs can go below: each distinct kernel of the round defined once
  // (sharing across programs, which one program's definitions cannot give another).
  std::set<size_t> distinct_kernels;
  size_t round_kernels = 0;
  for (const std::vector<size_t>& k : keys) {
    distinct_kernels.insert(k.begin(), k.end());
    round_kernels += k.size();
  }
  fmt::print("{}: {} distinct candidates of {} sampled, {} a program (one NVRTC thread, no cache); {} kernels, "
             "{} distinct in the whole round\n\n",
             spec, flats.size(), count, per_program, round_kernels, distinct_kernels.size());
  fmt::print("| kernels | definitions compiled | NVRTC ms | ms a candidate | failed programs |\n|---|---:|---:|---:|---:|\n");
  struct Mode {
    const char* name;
    const std::vector<ir::PrimFunc>* flats;
    bool share;
  };
  const Mode modes[] = {{"every member's, draw order", &flats, false},
                        {"shared, draw order", &flats, true},
                        {"shared, ordered by kernels", &by_kernels, true}};
  // The modes alternate, twice each, and the faster of each mode's runs is shown: NVRTC's
  // first compiles in a process are slower, and the machine may be shared.
  ModeResult best[3];
  for (int round = 0; round < 2; ++round) {
    for (size_t m = 0; m < 3; ++m) {
      ModeResult r = compile_programs(*modes[m].flats, static_cast<size_t>(per_program), modes[m].share);
      if (round == 0 || r.ms < best[m].ms) best[m] = r;
    }
  }
  for (size_t m = 0; m < 3; ++m) {
    const ModeResult& r = best[m];
    fmt::print("| {} | {} | {:.0f} | {:.1f} | {} |\n", modes[m].name, r.kernels, r.ms,
               r.ms / static_cast<double>(flats.size()), r.failed);
  }
  return 0;
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) {
  const int count = argc > 2 ? std::atoi(argv[2]) : 48;
  const int per_program = argc > 3 ? std::atoi(argv[3]) : 16;
  if (argc < 2 || argc > 4 || count < 1 || per_program < 1) {
    std::fprintf(stderr, "usage: %s SPEC [N >= 1 [PER_PROGRAM >= 1]]\n", argv[0]);
    return 2;
  }
  try {
    return dragon::run(argv[1], count, per_program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernel_sharing: %s\n", e.what());
    return 1;
  }
}
