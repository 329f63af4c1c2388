// The Python text of an exported KernelBench file and of its reference
// (kernelbench_export.h). The CUDA side is kernelbench_launcher.cc.
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/bench/kernelbench_export.h"
#include "dragon/support/error.h"
#include "kernelbench_launcher.h"

namespace dragon::bench {
namespace {

// FNV-1a of the CUDA source: the extension's name changes with its code, so two exports
// loaded into one process (or torch's build cache) never stand for each other.
uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// A Python raw triple-quoted string of `text`.
std::string py_raw_string(const std::string& text, const KernelBenchKernel& kernel) {
  if (text.find("\"\"\"") != std::string::npos || (!text.empty() && text.back() == '\\')) {
    throw InternalError(fmt::format("problem {}: the generated source cannot be quoted as a Python raw string",
                                    kernel.problem.name));
  }
  return "r\"\"\"\n" + text + "\"\"\"";
}

std::string identifier(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

std::string py_dtype(ir::DataType dtype) {
  if (dtype == ir::DataType::f64()) return "torch.float64";
  if (dtype == ir::DataType::f16()) return "torch.float16";
  if (dtype == ir::DataType::bf16()) return "torch.bfloat16";
  return "torch.float32";
}

std::string header(const KernelBenchKernel& kernel, std::string_view what) {
  return fmt::format(
      "# {} for KernelBench problem {} ({}), written by `dragon export kernelbench`.\n"
      "# Op spec: {}\n"
      "# Kernel: {}\n",
      what, kernel.problem.name, kernel.problem.where, kernel.spec, kernel.provenance);
}

std::string layers_init(const KernelBenchKernel& kernel) {
  std::string out;
  for (const KernelBenchLayer& layer : kernel.module.layers) {
    out += fmt::format("        self.{} = {}\n", layer.attribute, layer.constructor);
  }
  return out;
}

std::vector<std::string> forward_names(const KernelBenchKernel& kernel, const LauncherArguments& arguments) {
  std::vector<std::string> names;
  for (int i : arguments.forward_inputs) names.push_back(kernel.func->params[i].buffer->name);
  return names;
}

}  // namespace

std::string write_kernelbench_model_new(const KernelBenchKernel& kernel) {
  const LauncherArguments arguments = launcher_arguments(kernel);
  const std::string cuda = launcher_cuda_source(kernel, arguments);
  const std::string name = fmt::format("dragon_kb_{}_{:016x}", identifier(kernel.problem.id), fnv1a(cuda));
  std::vector<std::string> inputs = forward_names(kernel, arguments);
  std::vector<std::string> call = inputs;
  call.insert(call.end(), arguments.layer_expressions.begin(), arguments.layer_expressions.end());
  std::vector<std::string> kernel_names;
  for (const codegen::KernelLaunch& k : kernel.source.kernels) kernel_names.push_back(k.name);

  std::string py = header(kernel, "ModelNew (Little Dragon's generated CUDA)");
  py += fmt::format("# Kernels, in launch order: {}\n", fmt::join(kernel_names, ", "));
  py += R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

)";
  py += "CUDA_SOURCE = " + py_raw_string(cuda, kernel) + "\n\n";
  py += "CPP_SOURCE = \"" + launcher_declaration(kernel, arguments) + "\"\n\n";
  py += fmt::format(R"(

def _load_extension():
    # The kernels were generated for the H200: sm_90a (wgmma and setmaxnreg need the "a").
    # An arch flag among the flags keeps torch from adding its own for the device (sm_90,
    # which cannot hold them). torch's half-type macros are undefined so the generated code
    # sees cuda_fp16.h and cuda_bf16.h as NVRTC does.
    return load_inline(
        name="{0}",
        cpp_sources=CPP_SOURCE,
        cuda_sources=CUDA_SOURCE,
        functions=["forward"],
        extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a", "-std=c++17",
                           "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                           "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__"],
        verbose=False,
    )


_extension = _load_extension()


class ModelNew(nn.Module):
    # KernelBench constructs ModelNew(*get_init_inputs()) under the same seed as Model. The
    # kernel is compiled for the op spec's shapes, so the layers are built from the spec;
    # they are the layers Model builds, in the same order, so they draw the same weights.
    def __init__(self, *init_inputs, **init_kwargs):
        super().__init__()
{1}
    def forward(self, {2}):
        return _extension.forward({3})
)",
                    name, layers_init(kernel), fmt::join(inputs, ", "), fmt::join(call, ", "));
  return py;
}

std::string write_kernelbench_reference(const KernelBenchKernel& kernel) {
  const LauncherArguments arguments = launcher_arguments(kernel);
  std::vector<std::string> inputs = forward_names(kernel, arguments);
  std::string draws;
  for (int i : arguments.forward_inputs) {
    const ir::Param& p = kernel.func->params[i];
    using Kind = ir::ValueDomain::Kind;
    const Kind domain = p.domain.kind;
    if (!p.buffer->dtype.is_float() || (domain != Kind::kReal && domain != Kind::kPositive && domain != Kind::kSimplex)) {
      throw UserError(fmt::format("{}: problem {} ({}): input {} is not a real-valued float, which the reference's "
                                  "torch.rand cannot draw",
                                  kernel.problem.where, kernel.problem.name, kernel.spec, p.buffer->name));
    }
    // KernelBench draws torch.rand, in [0, 1); probabilities along the last axis are its softmax.
    draws += fmt::format("    {} = torch.rand({}, dtype={}){}\n", p.buffer->name, fmt::join(p.buffer->shape, ", "),
                         py_dtype(p.buffer->dtype), domain == Kind::kSimplex ? ".softmax(dim=-1)" : "");
  }
  std::string py = header(kernel, "Reference Model (torch) written from the op spec");
  py += fmt::format(R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, *init_inputs, **init_kwargs):
        super().__init__()
{0}
    def forward(self, {1}):
        return {2}


def get_inputs():
{3}    return [{1}]


def get_init_inputs():
    return []
)",
                    layers_init(kernel), fmt::join(inputs, ", "), kernel.module.forward, draws);
  return py;
}

}  // namespace dragon::bench
