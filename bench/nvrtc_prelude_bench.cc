// NVRTC's cost per search candidate, broken down (2026-12-05-nvrtc-prelude.md): for four
// typical candidates (an f32 elementwise op, f32 softmax, an f32 GEMM tiling of the
// MetaSchedule sketch, an f16 mma.sync GEMM) the wall and CPU time of one NVRTC program
// holding 1, 4, 8 or 16 copies of the candidate (renamed, one prelude, as
// compile_cuda_batch builds them), per candidate; then the fixed cost of a program (an
// empty kernel) with and without the fp16/bf16 headers and our prelude; PTX only (no
// ptxas) against CUBIN; the flags -minimal and the precompiled header (--use-pch).
// Calls NVRTC directly (no compile cache). Needs NVRTC, not a GPU.
//
//   bench_nvrtc_prelude [REPEATS]   (default 3; the minimum of REPEATS compiles is shown)
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/search/rewrite_unroll.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "unit/codegen/default_gpu_schedule.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"

namespace dragon {
namespace {

using schedule::Schedule;

constexpr std::string_view kHalfHeaders = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";

struct Candidate {
  std::string name;
  ir::PrimFunc scheduled;
};

std::vector<Candidate> candidates() {
  auto& registry = ops::OpRegistry::global();
  std::vector<Candidate> out;
  out.push_back({"f32 relu 16x1024", codegen::testing::default_gpu_schedule(
                                          registry.make_workload("relu:shape=16x1024,dtype=f32").func)});
  out.push_back({"f32 softmax 16x256", codegen::testing::default_gpu_schedule(
                                            registry.make_workload("softmax:shape=16x256,axis=1,dtype=f32").func)});
  {
    Schedule sch(registry.make_workload("matmul:m=1024,n=1024,k=1024").func);
    schedule::testing::GemmSketchDecisions t;
    t.i = {16, 1, 16, 1, 4};
    t.j = {16, 1, 16, 1, 4};
    t.k = {128, 2, 4};
    t.unroll = 1;
    schedule::testing::apply_gemm_sketch(sch, t);
    sch.enter_postproc();
    search::rewrite_cooperative_fetch(sch);
    search::rewrite_unroll(sch);
    search::auto_bind(sch);
    out.push_back({"f32 GEMM 1024^3 tiled 64x64x8", sch.func()});
  }
  {
    Schedule sch = schedule::testing::tensorcore_gemm_sketch("matmul:m=128,n=128,k=128,dtype=f16");
    search::auto_bind(sch);
    out.push_back({"f16 mma.sync GEMM 128^3", sch.func()});
  }
  return out;
}

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
double wall_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct Time {
  double wall = 1e9, cpu = 1e9;
};

void check(nvrtcResult rc, nvrtcProgram p, const char* what) {
  if (rc == NVRTC_SUCCESS) return;
  size_t n = 0;
  nvrtcGetProgramLogSize(p, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  fmt::print(stderr, "{}: {}\n{}\n", what, nvrtcGetErrorString(rc), log);
  std::exit(1);
}

// `code` compiled with `flags` (the caller destroys the program).
nvrtcProgram compiled(const std::string& code, const std::vector<std::string>& flags) {
  nvrtcProgram p = nullptr;
  check(nvrtcCreateProgram(&p, code.c_str(), "bench.cu", 0, nullptr, nullptr), p, "create");
  std::vector<const char*> opts;
  for (const auto& f : flags) opts.push_back(f.c_str());
  check(nvrtcCompileProgram(p, static_cast<int>(opts.size()), opts.data()), p, "compile");
  return p;
}

// One compile of `code`: CUBIN when `cubin`, else only PTX.
void compile_once(const std::string& code, const std::vector<std::string>& flags, bool cubin) {
  nvrtcProgram p = compiled(code, flags);
  size_t size = 0;
  if (cubin) {
    check(nvrtcGetCUBINSize(p, &size), p, "cubin size");
    if (size == 0) fmt::print(stderr, "no CUBIN\n"), std::exit(1);
  } else {
    check(nvrtcGetPTXSize(p, &size), p, "ptx size");
  }
  nvrtcDestroyProgram(&p);
}

// The CUBIN of `code`.
std::string cubin_of(const std::string& code, const std::vector<std::string>& flags) {
  nvrtcProgram p = compiled(code, flags);
  size_t size = 0;
  check(nvrtcGetCUBINSize(p, &size), p, "cubin size");
  std::string bytes(size, '\0');
  check(nvrtcGetCUBIN(p, bytes.data()), p, "cubin");
  nvrtcDestroyProgram(&p);
  return bytes;
}

Time measure(int repeats, const std::function<void()>& body) {
  Time best;
  for (int r = 0; r < repeats; ++r) {
    double w = wall_now(), c = cpu_now();
    body();
    best.wall = std::min(best.wall, wall_now() - w);
    best.cpu = std::min(best.cpu, cpu_now() - c);
  }
  return best;
}

// `copies` renamed copies of the candidate in one program under one prelude.
std::string batched(const ir::PrimFunc& flat, int copies, const lower::Target& target) {
  std::string code;
  for (int i = 0; i < copies; ++i) {
    ir::PrimFunc member = copies == 1 ? flat
                                      : ir::PrimFunc::make(fmt::format("b{}_{}", i, flat->name), flat->params,
                                                           flat->body, flat->attrs);
    codegen::CudaSource s = codegen::generate_cuda(member, target);
    if (i == 0) code = s.code.substr(0, s.prelude_size);
    code += s.code.substr(s.prelude_size);
  }
  return code;
}

std::string with_half_headers(std::string code) {
  if (code.find(kHalfHeaders) == std::string::npos) code.insert(0, kHalfHeaders);
  return code;
}
std::string without_half_headers(std::string code) {
  if (size_t at = code.find(kHalfHeaders); at != std::string::npos) code.erase(at, kHalfHeaders.size());
  return code;
}

int run(int repeats) {
  const lower::Target target = lower::Target::cuda_h200();
  runtime::NvrtcOptions options;
  options.arch = target.arch;
  // "before": the flags without -minimal (nvrtc_flags adds it since this change).
  std::vector<std::string> flags = runtime::nvrtc_flags(options);
  flags.erase(std::remove(flags.begin(), flags.end(), "-minimal"), flags.end());
  std::vector<std::string> ptx_flags = flags;
  for (auto& f : ptx_flags) {
    if (f.rfind("--gpu-architecture=sm_", 0) == 0) f = "--gpu-architecture=compute_" + f.substr(22);
  }
  std::vector<std::string> minimal_flags = flags;
  minimal_flags.push_back("-minimal");
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  fmt::print("NVRTC {}.{}, flags (\"ours\", before -minimal):", major, minor);
  for (const auto& f : flags) fmt::print(" {}", f);
  fmt::print("\nminimum of {} compiles each; wall and CPU (this thread) in ms\n\n", repeats);

  // Fixed cost: an empty kernel.
  const std::string empty = "extern \"C\" __global__ void k() {}\n";
  std::string prelude;
  {
    ir::PrimFunc relu = lower::lower(candidates()[0].scheduled, target).func;
    codegen::CudaSource s = codegen::generate_cuda(relu, target);
    prelude = without_half_headers(s.code.substr(0, s.prelude_size));
  }
  fmt::print("## Fixed cost of a program (an empty kernel)\n\n| source | output | flags | wall ms | CPU ms |\n|---|---|---|---:|---:|\n");
  struct Fixed {
    std::string name, code;
  };
  for (const Fixed& f : {Fixed{"empty kernel", empty}, Fixed{"+ fp16/bf16 headers", std::string(kHalfHeaders) + empty},
                         Fixed{"+ our prelude (no half headers)", prelude + empty},
                         Fixed{"+ our prelude + half headers", std::string(kHalfHeaders) + prelude + empty}}) {
    Time c = measure(repeats, [&] { compile_once(f.code, flags, true); });
    Time p = measure(repeats, [&] { compile_once(f.code, ptx_flags, false); });
    Time m = measure(repeats, [&] { compile_once(f.code, minimal_flags, true); });
    fmt::print("| {} | CUBIN | ours | {:.1f} | {:.1f} |\n", f.name, c.wall * 1e3, c.cpu * 1e3);
    fmt::print("| {} | PTX | ours | {:.1f} | {:.1f} |\n", f.name, p.wall * 1e3, p.cpu * 1e3);
    fmt::print("| {} | CUBIN | ours -minimal | {:.1f} | {:.1f} |\n", f.name, m.wall * 1e3, m.cpu * 1e3);
  }

  // Precompiled header: the half headers in a header file, created once, then used.
  {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("dragon-pch-{}", ::getpid());
    std::filesystem::create_directories(dir);
    std::string header = (dir / "dragon_half.h").string();
    {
      FILE* f = std::fopen(header.c_str(), "w");
      std::fputs(std::string(kHalfHeaders).c_str(), f);
      std::fclose(f);
    }
    std::string pch = (dir / "dragon_half.pch").string();
    std::vector<std::string> create = flags, use = flags;
    create.push_back("--include-path=" + dir.string());
    use.push_back("--include-path=" + dir.string());
    create.push_back("--create-pch=" + pch);
    use.push_back("--use-pch=" + pch);
    const std::string code = "#include \"dragon_half.h\"\n" + prelude + empty;
    Time c = measure(1, [&] { compile_once(code, create, true); });
    bool made = std::filesystem::exists(pch);
    Time u = made ? measure(repeats, [&] { compile_once(code, use, true); }) : Time{};
    Time plain = measure(repeats, [&] { compile_once(code, flags.size() ? [&] {
                                            auto f = flags;
                                            f.push_back("--include-path=" + dir.string());
                                            return f;
                                          }() : flags, true); });
    fmt::print("| half headers via a header file + prelude | CUBIN | ours | {:.1f} | {:.1f} |\n", plain.wall * 1e3,
               plain.cpu * 1e3);
    fmt::print("| same, --create-pch (once; PCH {} bytes) | CUBIN | ours | {:.1f} | {:.1f} |\n",
               made ? std::filesystem::file_size(pch) : 0, c.wall * 1e3, c.cpu * 1e3);
    if (made) fmt::print("| same, --use-pch | CUBIN | ours | {:.1f} | {:.1f} |\n", u.wall * 1e3, u.cpu * 1e3);
    else fmt::print("| --create-pch made no file | | | | |\n");
    std::filesystem::remove_all(dir);
  }

  // Same results: the CUBIN of each candidate with and without the half headers (f32
  // candidates) and with and without -minimal.
  fmt::print("\n## Same CUBIN?\n\n| candidate | without half headers | with -minimal |\n|---|---|---|\n");
  for (const Candidate& c : candidates()) {
    ir::PrimFunc flat = lower::lower(c.scheduled, target).func;
    std::string code = codegen::generate_cuda(flat, target).code;
    std::string base = cubin_of(with_half_headers(code), flags);
    bool needs_half = c.name.rfind("f16", 0) == 0;
    std::string no_half = needs_half ? "(uses them)" : base == cubin_of(without_half_headers(code), flags) ? "identical" : "DIFFERENT";
    std::string minimal = cubin_of(code, flags) == cubin_of(code, minimal_flags) ? "identical" : "DIFFERENT";
    fmt::print("| {} | {} | {} |\n", c.name, no_half, minimal);
  }

  fmt::print("\n## Per candidate, batched N per program (ms per candidate)\n\n");
  fmt::print("| candidate | N | half headers | output | flags | wall ms/cand | CPU ms/cand |\n|---|---:|---|---|---|---:|---:|\n");
  for (const Candidate& c : candidates()) {
    ir::PrimFunc flat = lower::lower(c.scheduled, target).func;
    bool needs_half = c.name.rfind("f16", 0) == 0;
    for (int n : {1, 4, 8, 16}) {
      std::string code = batched(flat, n, target);
      struct Row {
        std::string half;
        std::string code;
        std::string output;
        const std::vector<std::string>* flags;
        std::string flag_name;
      };
      // Before this change (headers everywhere, no -minimal), each half of it, and after.
      const std::string own = needs_half ? code : without_half_headers(code);
      const std::string own_half = needs_half ? "yes" : "no";
      std::vector<Row> rows = {{"yes", with_half_headers(code), "CUBIN", &flags, "ours"}};
      if (!needs_half) rows.push_back({"no", own, "CUBIN", &flags, "ours"});
      if (!needs_half) rows.push_back({"yes", with_half_headers(code), "CUBIN", &minimal_flags, "ours -minimal"});
      rows.push_back({own_half, own, "CUBIN", &minimal_flags, "ours -minimal (after)"});
      if (n == 1) rows.push_back({own_half, own, "PTX", &ptx_flags, "ours"});
      for (const Row& r : rows) {
        Time t = measure(repeats, [&] { compile_once(r.code, *r.flags, r.output == "CUBIN"); });
        fmt::print("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} |\n", c.name, n, r.half, r.output, r.flag_name,
                   t.wall * 1e3 / n, t.cpu * 1e3 / n);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace dragon

int main(int argc, char** argv) { return dragon::run(argc > 1 ? std::atoi(argv[1]) : 3); }
