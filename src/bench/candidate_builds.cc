// NVRTC in forked children and the wire form of a build (candidate_builds.h).
#include "dragon/bench/candidate_builds.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "dragon/lower/target.h"
#include "dragon/search/worker_process.h"

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

void build_candidates_streaming(const std::vector<ir::PrimFunc>& flats, const CandidateBuildOptions& options,
                                const TakeBuild& take) {
  const lower::Target target = lower::Target::cuda_h200();
  const size_t processes = compile_children(options);
  const std::vector<ProgramRange> chunks =
      plan_programs(flats.size(), static_cast<size_t>(std::max(1, options.functions_per_program)), processes,
                    static_cast<size_t>(std::max(1, options.min_waves)));
  using Chunk = ProgramRange;  // flats[begin, end)

  // Built by the previous wave, not yet taken: handed over while the next wave compiles.
  std::vector<std::pair<size_t, Expected<runtime::CudaBuild>>> ready;
  auto hand_over = [&] {
    for (auto& [index, build] : ready) take(index, std::move(build));
    ready.clear();
  };
  for (size_t first = 0; first < chunks.size(); first += processes) {
    const size_t last = std::min(chunks.size(), first + processes);
    // Forked from this thread while no other runs; each child compiles its chunk
    // (inherited with the rest of this process's memory) and sends the builds back.
    std::vector<std::unique_ptr<search::WorkerProcess>> children;
    for (size_t c = first; c < last; ++c) {
      const Chunk chunk = chunks[c];
      children.push_back(std::make_unique<search::WorkerProcess>([&flats, chunk, target](const std::string&) {
        std::vector<ir::PrimFunc> mine(flats.begin() + static_cast<std::ptrdiff_t>(chunk.begin),
                                       flats.begin() + static_cast<std::ptrdiff_t>(chunk.end));
        ByteWriter out;
        // The whole range in one NVRTC program.
        for (auto& b : runtime::compile_cuda_batch(mine, target, {}, static_cast<int>(mine.size()))) {
          out.u64(b.ok() ? 1 : 0);
          if (b.ok()) {
            encode_build(out, b.value());
          } else {
            out.bytes(b.error().describe());
          }
        }
        return out.take();
      }));
    }
    std::vector<search::WorkerReply> replies(children.size());
    std::vector<bool> sent(children.size(), false);
    for (size_t k = 0; k < children.size(); ++k) {
      if (std::optional<search::WorkerReply> failed = children[k]->send("compile")) {
        replies[k] = std::move(*failed);
      } else {
        sent[k] = true;
      }
    }
    hand_over();  // the children compile meanwhile
    std::vector<std::thread> waiting;
    for (size_t k = 0; k < children.size(); ++k) {
      if (sent[k]) waiting.emplace_back([&, k] { replies[k] = children[k]->receive(options.timeout); });
    }
    for (std::thread& t : waiting) t.join();
    for (size_t k = 0; k < children.size(); ++k) {
      const Chunk& chunk = chunks[first + k];
      if (!replies[k].ok()) {
        for (size_t i = chunk.begin; i < chunk.end; ++i) {
          ready.emplace_back(i, DRAGON_RUNTIME_FAILURE("NVRTC child", replies[k].error, ""));
        }
        continue;
      }
      ByteReader in(replies[k].bytes);
      for (size_t i = chunk.begin; i < chunk.end; ++i) {
        if (in.u64() == 1) {
          ready.emplace_back(i, decode_build(in));
        } else {
          ready.emplace_back(i, DRAGON_RUNTIME_FAILURE("nvrtcCompileProgram", "NVRTC rejected the candidate",
                                                       std::string(in.bytes())));
        }
      }
    }
  }
  hand_over();
}

}  // namespace dragon::bench
