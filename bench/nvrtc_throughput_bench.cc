// NVRTC build throughput (issue 5, Benchmarks): 24 GPU-scheduled GEMM variants (16 fp32
// tilings of the MetaSchedule sketch at 1024^3, 8 tensor-core f16/bf16 sketches at 128^3)
// compiled to sm_90a CUBINs serially, on NVRTC's thread pool, and batched several per
// NVRTC program (runtime/compile.h, compile_cuda_batch), in kernels per second. Each mode
// compiles into a fresh, empty cache directory of its own, so every figure is real
// compiles (plus writing each CUBIN once to that cache), never cache hits. Code generation
// is inside the timed region too (under a millisecond per variant, see
// lower_codegen_bench.cc); lowering and scheduling are not. The last modes compile as the
// tuner does (bench::build_candidates: NVRTC children forked once, nvrtc_children.h, fed
// programs as they finish), into a fresh cache too. Needs NVRTC, not a GPU.
//
//   bench_nvrtc_throughput [REPEATS]   (default 1; the best of REPEATS runs per mode)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dragon/bench/candidate_builds.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/search/rewrite_unroll.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"

namespace dragon {
namespace {

using schedule::Schedule;

// The MetaSchedule GEMM sketch (tests/unit/schedule/gemm_sketch.h) with `decisions` on a
// 1024^3 matmul, and its postprocessors.
Schedule tiled_fp32_gemm(const schedule::testing::GemmSketchDecisions& decisions) {
  Schedule sch(ops::OpRegistry::global().make_workload("matmul:m=1024,n=1024,k=1024").func);
  schedule::testing::apply_gemm_sketch(sch, decisions);
  sch.enter_postproc();
  search::rewrite_cooperative_fetch(sch);
  search::rewrite_unroll(sch);
  return sch;
}

struct Variant {
  std::string name;
  ir::PrimFunc flat;
};

std::vector<Variant> gemm_variants() {
  std::vector<Variant> variants;
  const lower::Target target = lower::Target::cuda_h200();
  // Block tiles 64x64 to 128x128 (16x16 threads, or 8x16 / 16x8 with two virtual threads
  // on the halved side), k tiles of 8 or 16, auto-unroll limit 16 or 512: 4 x 2 x 2 = 16 fp32
  // variants.
  struct Block {
    int64_t bm, bn, vthread_i, vthread_j;
  };
  for (Block b : {Block{64, 64, 1, 1}, Block{128, 128, 1, 1}, Block{128, 64, 2, 1}, Block{64, 128, 1, 2}}) {
    for (int64_t bk : {8, 16}) {
      for (int64_t unroll : {16, 512}) {
        schedule::testing::GemmSketchDecisions t;
        t.i = {1024 / b.bm, b.vthread_i, 16 / b.vthread_i, b.bm / 64, 4};
        t.j = {1024 / b.bn, b.vthread_j, 16 / b.vthread_j, b.bn / 64, 4};
        t.k = {1024 / bk, bk / 4, 4};
        t.unroll = unroll == 16 ? 1 : 3;  // {0, 16, 64, 512, 1024}
        Schedule sch = tiled_fp32_gemm(t);
        search::auto_bind(sch);
        variants.push_back({fmt::format("fp32 {}x{}x{} vthread {}x{} unroll {}", b.bm, b.bn, bk, b.vthread_i,
                                        b.vthread_j, unroll),
                            lower::lower(sch.func(), target).func});
      }
    }
  }
  // The tensor-core sketch (mma.sync m16n8k16): f16 and bf16, B as [k, n] or [n, k],
  // shared copies by one lane or spread over the warps' lanes: 8 variants.
  for (const char* dtype : {"f16", "bf16"}) {
    for (bool trans_b : {false, true}) {
      for (bool cooperative : {false, true}) {
        std::string spec =
            fmt::format("matmul:m=128,n=128,k=128{},dtype={}", trans_b ? ",trans_b=true" : "", dtype);
        Schedule sch = schedule::testing::tensorcore_gemm_sketch(spec);
        if (cooperative) search::rewrite_cooperative_fetch(sch);
        search::auto_bind(sch);
        variants.push_back({fmt::format("tensor-core {}{}{}", dtype, trans_b ? " trans_b" : "",
                                        cooperative ? " cooperative" : ""),
                            lower::lower(sch.func(), target).func});
      }
    }
  }
  return variants;
}

struct Mode {
  std::string name;
  int threads;
  int functions_per_program;  // 0: compile_cuda_all (one program per function)
  // > 0: the tuner's way, bench::build_candidates: this many NVRTC children, fed programs
  // of at most functions_per_program functions (plan_programs) as they finish.
  int children = 0;
};

struct Measurement {
  double seconds = 0;
  double cpu_seconds = 0;  // user + system time of the whole process (every NVRTC thread)
  size_t programs = 0;  // distinct CUBINs: programs that compiled as a whole
  size_t kernels = 0;
};

// An empty directory under the system's temporary directory, named for this process.
std::string empty_directory(const std::string& tag) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("dragon-nvrtc-bench-{}-{}", ::getpid(), tag);
  std::filesystem::remove_all(path);
  return path.string();
}

// A compile cache that exists only for one measurement.
class ScratchCache {
 public:
  explicit ScratchCache(const std::string& tag) : cache_(empty_directory(tag)) {}
  ~ScratchCache() { std::filesystem::remove_all(cache_.directory()); }
  runtime::CompileCache& cache() { return cache_; }

 private:
  runtime::CompileCache cache_;
};

// This process's CPU time and its waited-for children's (the forked compilers).
double process_cpu_seconds() {
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    total += seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  return total;
}

std::vector<Expected<runtime::CudaBuild>> compile(const Mode& mode, const std::vector<ir::PrimFunc>& flats,
                                                  const runtime::BuildOptions& options) {
  const lower::Target target = lower::Target::cuda_h200();
  if (mode.children > 0) {
    return bench::build_candidates(
        flats, bench::CandidateBuildOptions{.functions_per_program = mode.functions_per_program,
                                            .processes = mode.children});
  }
  return mode.functions_per_program == 0 ? runtime::compile_cuda_all(flats, target, options)
                                         : runtime::compile_cuda_batch(flats, target, options, mode.functions_per_program);
}

Measurement measure(const Mode& mode, const std::vector<ir::PrimFunc>& flats, int run) {
  ScratchCache scratch(fmt::format("{}-{}-{}-{}", mode.threads, mode.functions_per_program, run, flats.size()));
  runtime::BuildOptions options;
  options.cache = &scratch.cache();
  options.nvrtc_threads = mode.threads;
  // Forked children use the global cache, which they open after the fork (this process
  // never does): pointed at the empty scratch directory, every function compiles.
  if (mode.children > 0) ::setenv("DRAGON_CACHE_DIR", std::string(scratch.cache().directory()).c_str(), 1);
  const double cpu_start = process_cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  std::vector<Expected<runtime::CudaBuild>> builds = compile(mode, flats, options);
  Measurement m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.cpu_seconds = process_cpu_seconds() - cpu_start;
  std::set<std::string> modules;
  for (size_t i = 0; i < builds.size(); ++i) {
    if (!builds[i]) {
      fmt::print(stderr, "{}: variant {} failed: {}\n", mode.name, i, builds[i].error().describe());
      std::exit(1);
    }
    modules.insert(builds[i].value().cubin.bytes);
    m.kernels += builds[i].value().source.kernels.size();
  }
  if (scratch.cache().hits() != 0) {
    fmt::print(stderr, "{}: {} cache hits in a fresh cache\n", mode.name, scratch.cache().hits());
    std::exit(1);
  }
  m.programs = modules.size();
  return m;
}

// What batching can save per program: NVRTC on the generated prelude (headers, helpers;
// the tensor-core one when `flat` uses it) with one empty kernel, best of `repeats`.
double fixed_cost_seconds(const ir::PrimFunc& flat, int repeats) {
  codegen::CudaSource source = codegen::generate_cuda(flat, lower::Target::cuda_h200());
  std::string code = source.code.substr(0, source.prelude_size) + "extern \"C\" __global__ void empty() {}\n";
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    ScratchCache scratch(fmt::format("fixed-{}", r));
    auto start = std::chrono::steady_clock::now();
    Expected<runtime::Cubin> cubin = runtime::nvrtc_compile(code, "empty.cu", {}, scratch.cache());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!cubin) {
      fmt::print(stderr, "the empty program failed: {}\n", cubin.error().describe());
      std::exit(1);
    }
    if (r == 0 || seconds < best) best = seconds;
  }
  return best;
}

int run(int repeats) {
  if (!runtime::nvrtc_available()) {
    fmt::print(stderr, "this build has no NVRTC (the CUDA toolkit was not found)\n");
    return 1;
  }
  std::vector<Variant> variants = gemm_variants();
  std::vector<ir::PrimFunc> flats;
  for (const Variant& v : variants) flats.push_back(v.flat);
  fmt::print("NVRTC {} -> {} CUBIN; {} GEMM variants; {} hardware threads; best of {} run(s) per mode\n",
             runtime::nvrtc_version().value(), lower::Target::cuda_h200().arch, flats.size(),
             std::thread::hardware_concurrency(), repeats);
  for (const Variant& v : variants) fmt::print("  {}\n", v.name);
  // NVRTC's first compile in a process loads its builtins: not part of any mode.
  {
    ScratchCache warm("warm-up");
    runtime::BuildOptions options;
    options.cache = &warm.cache();
    (void)runtime::compile_cuda_all({flats.back()}, lower::Target::cuda_h200(), options);
  }
  const int children = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() - 1));
  const std::vector<Mode> modes = {
      {"serial", 1, 0},
      {"parallel", 2, 0},
      {"parallel", 8, 0},
      {"batched 4/program", 1, 4},
      {"batched 4/program", 8, 4},
      {"batched 8/program", 1, 8},
      {"batched 8/program", 8, 8},
      {"batched 24/program", 1, 24},
      // As the tuner compiles (into an empty cache: every figure is a compile).
      {"NVRTC children", 1, 1, children},
      {"NVRTC children", 1, 4, children},
      {"NVRTC children", 1, 8, children},
      {"NVRTC children", 1, 1, children + 1},
      {"NVRTC children", 1, 4, children + 1},
  };
  fmt::print("NVRTC's fixed cost per program (the prelude and one empty kernel, serial): {:.1f} ms\n",
             1e3 * fixed_cost_seconds(variants.back().flat, repeats));
  fmt::print("\n| mode | NVRTC threads | children | functions/program | programs | kernels | wall s | CPU s | variants/s | "
             "kernels/s | vs serial |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  double serial_seconds = 0;
  for (const Mode& mode : modes) {
    Measurement best;
    for (int r = 0; r < repeats; ++r) {
      Measurement m = measure(mode, flats, r);
      if (r == 0 || m.seconds < best.seconds) best = m;
    }
    if (serial_seconds == 0) serial_seconds = best.seconds;
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f}x |\n", mode.name,
               mode.threads, mode.children, mode.functions_per_program == 0 ? 1 : mode.functions_per_program, best.programs, best.kernels,
               best.seconds, best.cpu_seconds, static_cast<double>(flats.size()) / best.seconds,
               static_cast<double>(best.kernels) / best.seconds, serial_seconds / best.seconds);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 1;
  if (repeats < 1) {
    std::fprintf(stderr, "usage: %s [REPEATS >= 1]\n", argv[0]);
    return 2;
  }
  return dragon::run(repeats);
}
