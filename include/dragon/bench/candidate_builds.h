// Building GPU tuning candidates on every core: NVRTC children (nvrtc_children.h) compile
// the lowered functions, several per NVRTC program, cut by plan_programs; and a compiled
// candidate's wire form (its launches, workspaces and CUBIN, not its source) for the GPU
// worker. No GPU is needed. Used by gpu_tuning.h.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/runtime/build.h"
#include "dragon/support/expected.h"
#include "dragon/bench/nvrtc_children.h"
#include "dragon/search/byte_codec.h"

namespace dragon::bench {

struct CandidateBuildOptions {
  int functions_per_program = 16;  // at most this many functions in one NVRTC program
  int processes = 0;  // children at once (0: the cores less one)
  std::chrono::milliseconds timeout{600000};  // one child's batch
  // At least this many programs per child: with 2 or more, the parent can use what the first
  // programs built while the rest compile (build_candidates_streaming).
  int min_waves = 1;
};

// How `count` functions are cut into NVRTC programs: consecutive ranges [begin, end), as
// even as can be, over as many of the `processes` children as there are functions, none
// longer than `max_per_program`. Measured on the H200 (bench/results/2026-12-05-h200-
// tuning.md): 32 candidates cut into programs of 16 kept 2 of 15 children busy, and
// compiling took 267 ms a GEMM candidate; NVRTC's time grows with the functions in a
// program, so a batch is spread over every child first, and programs come in full waves of
// one per child.
// How many children compile at once under `options` (processes, or the cores less one).
size_t compile_children(const CandidateBuildOptions& options);

using ProgramRange = runtime::CudaProgramBatch::Range;
std::vector<ProgramRange> plan_programs(size_t count, size_t max_per_program, size_t processes,
                                       size_t min_waves = 1);

// Compiles each flat (lowered) function for the H200 in `options.processes` NVRTC children
// started for this call; results in input order, a failure with NVRTC's log (or why the
// child ended). Must be called while this process has no other thread running (the
// children are forked). A tuner keeps one NvrtcChildren for all its rounds instead.
std::vector<Expected<runtime::CudaBuild>> build_candidates(const std::vector<ir::PrimFunc>& flats,
                                                                     const CandidateBuildOptions& options = {});
// The same builds, each handed to `take` (its index in `flats`, the result) as soon as its
// program is back, while the children compile the rest (NvrtcChildren::build).
void build_candidates_streaming(const std::vector<ir::PrimFunc>& flats, const CandidateBuildOptions& options,
                                const TakeBuild& take);
// How `children` cut `count` functions under `options`: plan_programs with its settings.
std::vector<ProgramRange> plan_programs(size_t count, const CandidateBuildOptions& options, size_t children);

void encode_build(search::ByteWriter& out, const runtime::CudaBuild& build);
// The build as encoded; its source text is empty (the GPU worker needs none).
runtime::CudaBuild decode_build(search::ByteReader& in);

}  // namespace dragon::bench
