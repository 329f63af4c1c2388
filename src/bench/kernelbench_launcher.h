// The CUDA translation unit of an exported KernelBench file (kernelbench_export.h): the
// generated kernels, in a namespace of their own, and the host function `forward` that
// checks its tensors, allocates the output and the workspaces in torch and launches every
// kernel on torch's current stream. Internal to the exporter.
#pragma once

#include <string>
#include <vector>

#include "dragon/bench/kernelbench_export.h"

namespace dragon::bench {

// The namespace the generated kernels live in.
inline constexpr const char* kGeneratedNamespace = "dragon_generated";

// How `forward`'s arguments are ordered: the forward inputs, then the layer tensors
// (kernelbench_module.h), each a function parameter index.
struct LauncherArguments {
  std::vector<int> forward_inputs;  // function parameters ModelNew.forward receives
  std::vector<int> layer_tensors;   // function parameters a layer feeds, in binding order
  std::vector<std::string> layer_expressions;  // "self.conv.weight", one per layer_tensors
  int output = -1;                  // the one output parameter
};

// Which function parameter is what; throws UserError naming the problem when the function
// has other than one output, an inout parameter, or a binding to a parameter it lacks.
LauncherArguments launcher_arguments(const KernelBenchKernel& kernel);

// The C++ declaration of `forward` (the cpp source of load_inline).
std::string launcher_declaration(const KernelBenchKernel& kernel, const LauncherArguments& arguments);

// The whole CUDA source: the generated code with its prelude's #include lines hoisted above
// the namespace, then `forward`.
std::string launcher_cuda_source(const KernelBenchKernel& kernel, const LauncherArguments& arguments);

// The torch output shape: the suite's output shape ("scalar" is a 0-d tensor) when it has
// as many elements as the output parameter, else the parameter's shape.
std::vector<int64_t> torch_output_shape(const KernelBenchKernel& kernel, const LauncherArguments& arguments);

}  // namespace dragon::bench
