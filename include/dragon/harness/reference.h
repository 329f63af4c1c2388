// The reference a candidate is judged against: the unscheduled function run on the
// harness's own copy of the inputs, in its own types and as its f64 twin
// (f64_promotion.h), with each output's tolerance calibrated from the gap between the two
// (tolerance.h). Not a checker (verify.h) and never handed to a candidate.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/runtime/build.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

enum class ReferenceEngine {
  // The interpreter: the oracle, independent of lowering and codegen; slow.
  kInterpreter,
  // The CPU backend's build of the unscheduled function and its twin (one compiler run):
  // far faster, for shapes the interpreter cannot afford. It trusts
  // lowering and CPU codegen, which their own tests check against the interpreter.
  kCompiledCpu,
};

struct ReferenceOptions {
  ReferenceEngine engine = ReferenceEngine::kInterpreter;
  runtime::BuildOptions build;  // kCompiledCpu only
};

struct ReferenceOutput {
  size_t param_index = 0;
  std::string name;
  tensor::HostTensor native;  // the unscheduled function in its own types
  tensor::HostTensor exact;   // its f64 twin (a copy of `native` for integer and bool outputs)
  double reference_error = 0; // normalized_difference(native, exact)
  double tolerance = 0;       // calibrated_tolerance(dtype, reference_error)
};

class Reference {
 public:
  // Prepares the function and its f64 twin for the engine; throws UserError for a
  // function the interpreter cannot run or lowering rejects, RuntimeError when the CPU
  // build fails.
  explicit Reference(ir::PrimFunc func, const ReferenceOptions& options = {});

  const ir::PrimFunc& func() const { return func_; }
  // Indices of the parameters a candidate writes (outputs and in-outs), in order.
  const std::vector<size_t>& output_params() const { return output_params_; }

  // The outputs for `args` (one per parameter; only the inputs and in-outs are read).
  std::vector<ReferenceOutput> compute(const std::vector<tensor::HostTensor>& args) const;
  // The native outputs only (`exact` a copy of them, tolerances the floors): for trivial
  // outputs' calibration, where the f64 twin would be wasted.
  std::vector<ReferenceOutput> compute_native(const std::vector<tensor::HostTensor>& args) const;

 private:
  ir::PrimFunc func_;
  ir::PrimFunc exact_func_;  // the f64 twin
  std::vector<size_t> output_params_;
  using Runner = std::function<void(std::vector<tensor::HostTensor>&)>;
  Runner native_;
  Runner exact_;
};

}  // namespace dragon::harness
