// How candidates are cut into NVRTC programs, built, and sent (candidate_builds.h).
#include "dragon/bench/candidate_builds.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "dragon/lower/target.h"

namespace dragon::bench {

using search::ByteReader;
using search::ByteWriter;

void encode_build(ByteWriter& out, const runtime::CudaBuild& build) {
  out.u64(build.source.kernels.size());
  for (const codegen::KernelLaunch& k : build.source.kernels) {
    out.bytes(k.name);
    for (int64_t v : k.grid) out.u64(static_cast<uint64_t>(v));
    for (int64_t v : k.block) out.u64(static_cast<uint64_t>(v));
    out.u64(static_cast<uint64_t>(k.dynamic_shared_bytes));
    out.u64(k.args.size());
    for (const codegen::KernelArg& a : k.args) {
      out.u64(static_cast<uint64_t>(a.kind));
      out.u64(static_cast<uint64_t>(a.index));
    }
  }
  out.u64(build.source.workspaces.size());
  for (const codegen::Workspace& w : build.source.workspaces) {
    out.bytes(w.name);
    out.u64(static_cast<uint64_t>(w.bytes));
  }
  out.bytes(build.cubin.bytes);
}

runtime::CudaBuild decode_build(ByteReader& in) {
  runtime::CudaBuild build;
  uint64_t kernels = in.u64();
  for (uint64_t i = 0; i < kernels; ++i) {
    codegen::KernelLaunch k;
    k.name = std::string(in.bytes());
    for (int64_t& v : k.grid) v = static_cast<int64_t>(in.u64());
    for (int64_t& v : k.block) v = static_cast<int64_t>(in.u64());
    k.dynamic_shared_bytes = static_cast<int64_t>(in.u64());
    uint64_t args = in.u64();
    for (uint64_t a = 0; a < args; ++a) {
      codegen::KernelArg arg;
      arg.kind = static_cast<codegen::KernelArg::Kind>(in.u64());
      arg.index = static_cast<int>(in.u64());
      k.args.push_back(arg);
    }
    build.source.kernels.push_back(std::move(k));
  }
  uint64_t workspaces = in.u64();
  for (uint64_t i = 0; i < workspaces; ++i) {
    codegen::Workspace w;
    w.name = std::string(in.bytes());
    w.bytes = static_cast<int64_t>(in.u64());
    build.source.workspaces.push_back(std::move(w));
  }
  build.cubin.bytes = std::string(in.bytes());
  return build;
}

std::vector<ProgramRange> plan_programs(size_t count, size_t max_per_program, size_t processes, size_t min_waves) {
  max_per_program = std::max<size_t>(1, max_per_program);
  processes = std::max<size_t>(1, processes);
  // Enough programs that none exceeds the maximum, in waves of one program per child: a
  // last wave of one program would leave every other child idle for a whole compile.
  const size_t needed = (count + max_per_program - 1) / max_per_program;
  const size_t waves = std::max<size_t>({1, min_waves, (needed + processes - 1) / processes});
  const size_t programs = std::min(count, waves * processes);
  std::vector<ProgramRange> ranges;
  size_t begin = 0;
  for (size_t p = 0; p < programs; ++p) {
    // The first count % programs programs take one function more.
    const size_t size = count / programs + (p < count % programs ? 1 : 0);
    ranges.push_back({begin, begin + size});
    begin += size;
  }
  return ranges;
}

std::vector<Expected<runtime::CudaBuild>> build_candidates(const std::vector<ir::PrimFunc>& flats,
                                                                     const CandidateBuildOptions& options) {
  std::vector<std::optional<Expected<runtime::CudaBuild>>> results(flats.size());
  build_candidates_streaming(flats, options,
                             [&](size_t index, Expected<runtime::CudaBuild> build) { results[index].emplace(std::move(build)); });
  std::vector<Expected<runtime::CudaBuild>> out;
  out.reserve(flats.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

size_t compile_children(const CandidateBuildOptions& options) {
  return options.processes > 0 ? static_cast<size_t>(options.processes)
                               : std::max(1u, std::thread::hardware_concurrency() - 1);
}

std::vector<ProgramRange> plan_programs(size_t count, const CandidateBuildOptions& options, size_t children) {
  return plan_programs(count, static_cast<size_t>(std::max(1, options.functions_per_program)), children,
                       static_cast<size_t>(std::max(1, options.min_waves)));
}

void build_candidates_streaming(const std::vector<ir::PrimFunc>& flats, const CandidateBuildOptions& options,
                                const TakeBuild& take) {
  NvrtcChildren children(compile_children(options), lower::Target::cuda_h200(), options.timeout);
  children.build(flats, plan_programs(flats.size(), options, children.size()), take);
}

}  // namespace dragon::bench
