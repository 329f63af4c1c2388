// Outputs that need no computation: zeros, a constant, the reference's mean, another
// input set's output, an input passed through. A check that one of them passes is weak
// (ARCHITECTURE.md, "Correctness is judged"). What the weak-problem audit feeds to the
// checks; not itself a check.
#pragma once

#include <string>
#include <vector>

#include "dragon/harness/reference.h"
#include "dragon/ir/function.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

struct TrivialOutput {
  std::string name;                         // "zeros", "input X passed through", ...
  std::vector<tensor::HostTensor> outputs;  // one per written parameter, like the reference's
};

// The trivial outputs for one input set. `reference` holds the outputs for `args` (their
// shapes and types); `calibration`, when given, the outputs for other inputs of the same
// distribution: what a cheater can know in advance.
//   zeros; ones; with a calibration, the reference's mean (its mean, per output) and the
//   output for other inputs (its outputs); and for each input with as many elements as an
//   output, that input passed through (outputs of other sizes stay zero).
std::vector<TrivialOutput> make_trivial_outputs(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& args,
                                                const std::vector<ReferenceOutput>& reference,
                                                const std::vector<ReferenceOutput>* calibration = nullptr);

// Whether every output of `trivial` is within the reference's tolerance: what our check
// would say about it.
bool passes_our_check(const TrivialOutput& trivial, const std::vector<ReferenceOutput>& reference);

}  // namespace dragon::harness
