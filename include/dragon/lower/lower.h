// lower(): a scheduled PrimFunc (blocks, multi-dimensional buffers) to the flat form that
// code generation prints. The pipeline is the list in src/lower/lower.cc, one pass per
// file (passes.h). Not a code generator and never a schedule decision.
//
// The flat form, which every emitter may rely on:
//  - no Block or BlockRealize: block predicates became IfThenElse, reduction inits
//    became guarded stores, iteration variables were replaced by their bindings;
//  - every buffer is one-dimensional (parameters too: same name and dtype, shape
//    {num_elements}), indexed by one simplified integer expression;
//  - intermediate buffers are Allocate statements placed where they live; a block
//    annotation a pass must keep (tensor_intrin, ...) rides on a unit serial For
//    wrapped around what the block became;
//  - CPU: loops keep their kinds (parallel -> OpenMP, vectorized -> simd, unrolled);
//    thread-bound loops run serially (the sequential semantics of block IR), so any
//    schedule the interpreter runs also runs on the CPU;
//  - CUDA: the body is a SeqStmt of kernels (a single kernel needs no SeqStmt) and of
//    global-scope Allocate statements around them (workspaces the host allocates). A
//    kernel is a nest of For(kThreadBinding) loops, blockIdx.* outermost then
//    threadIdx.*, each tag once, extent = launch extent, starting at 0; inside, shared
//    and local Allocates, code that reads the thread variables directly, guards where
//    a loop bound to a tag had a smaller extent, and Evaluate(sync_threads()) barriers.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"

namespace dragon::lower {

struct PassTiming {
  std::string pass;
  std::chrono::nanoseconds elapsed{0};
  bool changed = false;
};

struct LowerOptions {
  // Called after each pass with its name, the IR text after it, and whether it changed
  // anything (the CLI's --print-after-all prints "(unchanged)" for those).
  std::function<void(const std::string& pass, const ir::PrimFunc& after, bool changed)> after_pass;
  // Fill `timings` with one entry per pass run.
  bool time_passes = false;
};

struct Lowered {
  ir::PrimFunc func;
  std::vector<PassTiming> timings;  // empty unless LowerOptions::time_passes
};

// Runs the pipeline for `target`. A scheduled function the target cannot run (too many
// threads or too much shared memory on the GPU, a loop nest left unbound on the GPU) is
// a UserError naming the limit and the value.
Lowered lower(const ir::PrimFunc& func, const Target& target, const LowerOptions& options = {});

// What breaks the flat form's promises checkable on the IR alone (a block left, a buffer
// or an access of rank other than 1), one sentence each; empty for a lowered function.
// lower() checks its result with it when IR checks are on.
std::vector<std::string> find_flat_form_problems(const ir::PrimFunc& func);

}  // namespace dragon::lower
