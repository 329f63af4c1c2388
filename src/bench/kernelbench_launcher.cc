// The CUDA translation unit of an exported KernelBench file (kernelbench_launcher.h). The
// generated code was written for NVRTC; nvcc (load_inline) compiles it with torch's headers
// in front, whose <cstdint> int64_t (long) would clash with the prelude's typedefs (long
// long), so the code sits in a namespace of its own; its #include lines move above it.
#include "kernelbench_launcher.h"

#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

// torch's C++ name for a dtype; UserError for one it has none for.
std::string torch_scalar_type(ir::DataType dtype, const KernelBenchKernel& kernel, const std::string& param) {
  if (dtype == ir::DataType::f32()) return "at::kFloat";
  if (dtype == ir::DataType::f64()) return "at::kDouble";
  if (dtype == ir::DataType::f16()) return "at::kHalf";
  if (dtype == ir::DataType::bf16()) return "at::kBFloat16";
  if (dtype == ir::DataType::i8()) return "at::kChar";
  if (dtype == ir::DataType::i32()) return "at::kInt";
  if (dtype == ir::DataType::i64()) return "at::kLong";
  if (dtype == ir::DataType::boolean()) return "at::kBool";
  throw UserError(fmt::format("{}: problem {} ({}): parameter {} is {}, which torch has no tensor type for",
                              kernel.problem.where, kernel.problem.name, kernel.spec, param, ir::to_string(dtype)));
}

// A shape as a C++ IntArrayRef argument; a 0-d tensor's is spelled out, as `{}` alone
// could also read as other overloads' arguments.
std::string braced(const std::vector<int64_t>& shape) {
  return shape.empty() ? "at::IntArrayRef{}" : fmt::format("{{{}}}", fmt::join(shape, ", "));
}

const ir::Param& param(const KernelBenchKernel& kernel, int index) { return kernel.func->params[index]; }
const std::string& param_name(const KernelBenchKernel& kernel, int index) {
  return param(kernel, index).buffer->name;
}

// The generated code with its #include lines (all in the prelude) moved out in front of the
// namespace.
std::string namespaced_code(const codegen::CudaSource& source) {
  std::string includes, rest;
  std::istringstream lines(source.code);
  for (std::string line; std::getline(lines, line);) {
    (line.rfind("#include", 0) == 0 ? includes : rest) += line + "\n";
  }
  return fmt::format("{}namespace {} {{\n{}}}  // namespace {}\n", includes, kGeneratedNamespace, rest,
                     kGeneratedNamespace);
}

constexpr const char* kLauncherHelpers = R"CUDA(
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

namespace {

void dragon_check_tensor(const torch::Tensor& t, const char* name, at::ScalarType dtype, at::IntArrayRef shape) {
  TORCH_CHECK(t.is_cuda(), name, ": expected a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == dtype, name, ": expected ", dtype, ", got ", t.scalar_type(),
              " (the kernel was compiled for %SPEC%)");
  TORCH_CHECK(t.sizes() == shape, name, ": expected shape ", shape, ", got ", t.sizes(),
              " (the kernel was compiled for %SPEC%)");
}

// Launches one generated kernel: the runtime API takes its arguments as the driver does,
// an array of pointers to each argument's value, so no kernel signature is restated here.
void dragon_launch(const void* kernel, const char* name, dim3 grid, dim3 block, size_t shared,
                   cudaStream_t stream, void** args) {
  if (shared > 48 * 1024) {  // above 48 KiB a kernel must opt in to dynamic shared memory
    cudaError_t opt_in = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(shared));
    TORCH_CHECK(opt_in == cudaSuccess, name, ": asking for ", shared, " bytes of shared memory: ",
                cudaGetErrorString(opt_in));
  }
  cudaError_t launched = cudaLaunchKernel(kernel, grid, block, args, shared, stream);
  TORCH_CHECK(launched == cudaSuccess, "launching ", name, ": ", cudaGetErrorString(launched));
}

}  // namespace
)CUDA";

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string dim3_text(const std::array<int64_t, 3>& d) { return fmt::format("dim3({}, {}, {})", d[0], d[1], d[2]); }

}  // namespace

LauncherArguments launcher_arguments(const KernelBenchKernel& kernel) {
  const auto& params = kernel.func->params;
  const std::string where = fmt::format("{}: problem {} ({})", kernel.problem.where, kernel.problem.name, kernel.spec);
  LauncherArguments a;
  std::vector<bool> bound(params.size(), false);
  for (const KernelBenchLayer& layer : kernel.module.layers) {
    for (const LayerBinding& b : layer.bindings) {
      int found = -1;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].buffer->name == b.param && params[i].role == ir::ParamRole::kInput) found = static_cast<int>(i);
      }
      if (found < 0) {
        throw UserError(fmt::format("{}: layer self.{} feeds parameter {}, which the function has no input of",
                                    where, layer.attribute, b.param));
      }
      bound[found] = true;
      a.layer_tensors.push_back(found);
      a.layer_expressions.push_back(fmt::format("self.{}.{}", layer.attribute, b.tensor));
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Param& p = params[i];
    if (p.role == ir::ParamRole::kInOut) {
      throw UserError(fmt::format("{}: parameter {} is updated in place, which a KernelBench forward (inputs in, "
                                  "one new tensor out) cannot express",
                                  where, p.buffer->name));
    }
    if (p.role == ir::ParamRole::kOutput) {
      if (a.output >= 0) {
        throw UserError(fmt::format("{}: the function has several outputs ({} and {}); a KernelBench forward "
                                    "returns one tensor",
                                    where, param_name(kernel, a.output), p.buffer->name));
      }
      a.output = static_cast<int>(i);
    } else if (!bound[i]) {
      a.forward_inputs.push_back(static_cast<int>(i));
    }
  }
  if (a.output < 0) throw UserError(fmt::format("{}: the function has no output", where));
  return a;
}

std::vector<int64_t> torch_output_shape(const KernelBenchKernel& kernel, const LauncherArguments& arguments) {
  const std::vector<int64_t>& param_shape = param(kernel, arguments.output).buffer->shape;
  int64_t elements = 1;
  for (int64_t e : param_shape) elements *= e;
  const std::string& text = kernel.problem.output;
  if (text == "scalar") return elements == 1 ? std::vector<int64_t>{} : param_shape;
  std::vector<int64_t> shape;
  int64_t product = 1;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, 'x');) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return param_shape;
    shape.push_back(std::stoll(part));
    product *= shape.back();
  }
  return !shape.empty() && product == elements ? shape : param_shape;
}

std::string launcher_declaration(const KernelBenchKernel& kernel, const LauncherArguments& arguments) {
  std::vector<std::string> args;
  for (int i : arguments.forward_inputs) args.push_back("torch::Tensor p_" + param_name(kernel, i));
  for (int i : arguments.layer_tensors) args.push_back("torch::Tensor p_" + param_name(kernel, i));
  return fmt::format("torch::Tensor forward({});", fmt::join(args, ", "));
}

std::string launcher_cuda_source(const KernelBenchKernel& kernel, const LauncherArguments& arguments) {
  std::string out = namespaced_code(kernel.source);
  out += replace_all(kLauncherHelpers, "%SPEC%", kernel.spec);
  std::string declaration = launcher_declaration(kernel, arguments);
  declaration.pop_back();  // the ';'
  out += "\n" + declaration + " {\n";
  std::vector<int> inputs = arguments.forward_inputs;
  inputs.insert(inputs.end(), arguments.layer_tensors.begin(), arguments.layer_tensors.end());
  const std::string first = inputs.empty() ? "" : "p_" + param_name(kernel, inputs.front());
  if (inputs.empty()) {
    throw UserError(fmt::format("{}: problem {} ({}): the function has no input to take the device from",
                                kernel.problem.where, kernel.problem.name, kernel.spec));
  }
  for (int i : inputs) {
    const ir::Param& p = param(kernel, i);
    out += fmt::format("  dragon_check_tensor(p_{0}, \"{0}\", {1}, {2});\n", p.buffer->name,
                       torch_scalar_type(p.buffer->dtype, kernel, p.buffer->name), braced(p.buffer->shape));
  }
  out += fmt::format("  const c10::cuda::CUDAGuard device_guard({}.device());\n", first);
  // Dense row-major buffers, as the calling convention wants (a no-op when already so).
  for (int i : inputs) out += fmt::format("  const torch::Tensor t_{0} = p_{0}.contiguous();\n", param_name(kernel, i));
  const ir::Param& output = param(kernel, arguments.output);
  out += fmt::format("  torch::Tensor t_{} = torch::empty({}, {}.options().dtype({}));\n", output.buffer->name,
                     braced(torch_output_shape(kernel, arguments)), first,
                     torch_scalar_type(output.buffer->dtype, kernel, output.buffer->name));
  for (size_t w = 0; w < kernel.source.workspaces.size(); ++w) {
    const codegen::Workspace& ws = kernel.source.workspaces[w];
    out += fmt::format("  torch::Tensor workspace{} = torch::empty({{{}}}, {}.options().dtype(at::kByte));  // {}\n",
                       w, ws.bytes, first, ws.name);
  }
  out += "  cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n";
  for (const codegen::KernelLaunch& k : kernel.source.kernels) {
    std::vector<std::string> values, pointers;
    for (size_t j = 0; j < k.args.size(); ++j) {
      const codegen::KernelArg& arg = k.args[j];
      const std::string tensor = arg.kind == codegen::KernelArg::Kind::kParam ? "t_" + param_name(kernel, arg.index)
                                                                              : fmt::format("workspace{}", arg.index);
      values.push_back(fmt::format("    void* a{} = {}.data_ptr();\n", j, tensor));
      pointers.push_back(fmt::format("&a{}", j));
    }
    out += "  {\n";
    for (const std::string& v : values) out += v;
    out += fmt::format("    void* args[] = {{{}}};\n", pointers.empty() ? "nullptr" : fmt::format("{}", fmt::join(pointers, ", ")));
    out += fmt::format("    dragon_launch(reinterpret_cast<const void*>(&{}::{}), \"{}\", {}, {}, {}, stream, args);\n",
                       kGeneratedNamespace, k.name, k.name, dim3_text(k.grid), dim3_text(k.block),
                       k.dynamic_shared_bytes);
    out += "  }\n";
  }
  out += fmt::format("  return t_{};\n}}\n", output.buffer->name);
  return out;
}

}  // namespace dragon::bench
