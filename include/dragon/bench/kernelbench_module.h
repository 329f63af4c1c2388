// What a KernelBench problem's Model holds and computes, per op kind: the torch layers its
// __init__ creates (in order: their construction draws from torch's RNG, so a ModelNew
// that builds the same layers in the same order under the same seed gets the same
// weights), which kernel parameter each layer tensor feeds, and the reference forward as a
// torch expression. The exporter (kernelbench_export.h) reads it; one table, so adding an
// op kind is one entry in src/bench/kernelbench_module.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"

namespace dragon::bench {

// A kernel parameter fed by a layer's tensor: `param` (the function's parameter name,
// "W") takes `self.<layer>.<tensor>` ("self.conv.weight").
struct LayerBinding {
  std::string param;
  std::string tensor;  // "weight", "bias"
};

// One torch layer the Model creates in __init__.
struct KernelBenchLayer {
  std::string attribute;    // "conv" -> self.conv
  std::string constructor;  // "nn.Conv2d(3, 96, kernel_size=(11, 11), ...)"
  std::vector<LayerBinding> bindings;
};

struct KernelBenchModule {
  std::vector<KernelBenchLayer> layers;  // in creation order; empty for a parameter-free Model
  // The reference forward's result as a Python expression over the forward inputs (the
  // function's inputs no layer feeds, by their parameter names) and `self`'s layers.
  std::string forward;
};

// The Model of `op` at `args`; nullopt when the table has no entry for the op kind, or
// none for these arguments (BatchNorm in eval mode, MaxPool returning indices).
std::optional<KernelBenchModule> kernelbench_module(const ops::OpKind& op, const ops::OpArgs& args);

// The op kinds the table covers, sorted (for error messages and docs).
std::vector<std::string> kernelbench_module_kinds();

}  // namespace dragon::bench
