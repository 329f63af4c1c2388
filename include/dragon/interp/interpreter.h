// The reference interpreter: executes any PrimFunc, scheduled or not, with sequential
// semantics on the CPU (thread-bound and parallel loops run as plain loops). It is the
// oracle schedules are checked against; it is never used to time anything.
#pragma once

#include <memory>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::interp {

// Semantics, exactly as the hardware type would compute:
// - f32 and f64 arithmetic is IEEE in that type; f16 and bf16 round to their type after
//   every operation. Math intrinsics are computed in double by <cmath> and rounded once to
//   the result type (a reference, not a model of fast device math); round() is half-to-even.
// - min/max follow CUDA fminf/fmaxf: a NaN operand yields the other operand.
// - Integers wrap in their width; Div/Mod truncate, FloorDiv/FloorMod floor; dividing by
//   zero throws UserError. float -> int truncates and saturates (NaN -> 0); casts to bool
//   are x != 0. Select evaluates only its chosen operand; And/Or short-circuit.
// - Every load and store is bounds-checked. Buffers allocated by a block (or Allocate)
//   are fresh, NaN-filled (0x5a.. for ints), each time it runs. Vector types are rejected.
// A PrimFunc prepared for repeated execution.
class CompiledFunction {
 public:
  // Throws UserError for functions it cannot run (symbolic extents that are not
  // integers, unsupported intrinsics are internal errors).
  static CompiledFunction compile(const ir::PrimFunc& func);
  ~CompiledFunction();
  CompiledFunction(CompiledFunction&&) noexcept;
  CompiledFunction& operator=(CompiledFunction&&) noexcept;

  // Runs on `args`, one per parameter in order, each shaped and typed like its buffer.
  // An out-of-bounds access throws UserError naming the buffer, the indices and the
  // statement; the arguments may then be partly written.
  void run(std::vector<tensor::HostTensor>& args) const;

 private:
  struct Impl;
  explicit CompiledFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// compile + run.
void run(const ir::PrimFunc& func, std::vector<tensor::HostTensor>& args);

}  // namespace dragon::interp
