// GEMM schedules with software-pipelined k loops, shared by the pipelining tests (lowering
// on the interpreter, CUDA generation with NVRTC, and the GPU): a SIMT f32 GEMM for any
// shape (split by None, so edges are predicated) and the tensor-core sketch with its
// cooperative copies spread over the threads. Not a search.
#pragma once

#include <cstdint>
#include <string>

#include "dragon/schedule/schedule.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"

namespace dragon::lower::testing {

// The three annotations of a pipelined loop (lower/passes.h); an empty string leaves
// that annotation out.
struct PipelineAnnotation {
  std::string stages = "0 0 1";
  std::string order;
  std::string async_stages = "0";
};

// Annotates `loop` as `p` says.
void annotate_pipeline(schedule::Schedule& sch, schedule::LoopRV loop, const PipelineAnnotation& p);

// A 32-thread SIMT GEMM of an f32 `spec` ("matmul:m=40,n=24,k=36"): 8x16 output tiles per
// thread block, 2x2 per thread, k steps of 8, A and B tiles copied into shared memory by
// all threads `vector` elements at a time, under the k-step loop annotated with `p`.
schedule::Schedule pipelined_simt_gemm(const std::string& spec, const PipelineAnnotation& p, int64_t vector = 2);

// The tensor-core sketch (tensorcore_gemm_sketch.h) on `spec` with `decisions`, its
// shared copies spread over the warps (rewrite_cooperative_fetch), the shared-tile loop
// annotated with `outer` and, when `inner` is given, the fragment loop with it; the
// output cast bound by AutoBind.
schedule::Schedule pipelined_tensorcore_gemm(const std::string& spec, const PipelineAnnotation& outer,
                                             const PipelineAnnotation* inner = nullptr,
                                             const schedule::testing::TensorCoreDecisions& decisions = {});

}  // namespace dragon::lower::testing
