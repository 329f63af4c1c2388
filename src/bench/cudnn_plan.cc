#include "dragon/bench/cudnn_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace dragon::bench {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// The index of the parameter called `name`, or -1: the plan reads the function's own
// parameter list so a change to an op's parameter order cannot silently swap operands.
int param_index(const ir::PrimFunc& func, const std::string& name) {
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (func->params[i].buffer->name == name) return static_cast<int>(i);
  }
  return -1;
}

// The function's one output parameter, or -1 (softmax names its output after the op).
int output_index(const ir::PrimFunc& func) {
  int found = -1;
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (func->params[i].role != ir::ParamRole::kOutput) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

std::optional<std::vector<int>> to_ints(const std::vector<int64_t>& values) {
  std::vector<int> out;
  for (int64_t v : values) {
    if (v < std::numeric_limits<int>::min() || v > kIntMax) return std::nullopt;
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t extent : shape) text += (text.empty() ? "" : "x") + std::to_string(extent);
  return text;
}

// cuDNN's element type for `dtype`: f32 runs in true fp32 (FMA math, no TF32) so the
// baseline meets our f32 tolerance as torch's default does; 16-bit types accumulate in f32
// on tensor cores, as ours do.
struct Types {
  CudnnDataType data, compute;
  CudnnMathType math;
};
std::optional<Types> types_of(ir::DataType dtype, std::string& why_not) {
  if (dtype == ir::DataType::f32()) return Types{CudnnDataType::kFloat, CudnnDataType::kFloat, CudnnMathType::kFma};
  if (dtype == ir::DataType::f16()) return Types{CudnnDataType::kHalf, CudnnDataType::kFloat, CudnnMathType::kTensorOp};
  if (dtype == ir::DataType::bf16()) {
    return Types{CudnnDataType::kBfloat16, CudnnDataType::kFloat, CudnnMathType::kTensorOp};
  }
  why_not = "no cuDNN baseline for " + ir::to_string(dtype) + " (f32, f16 and bf16 only)";
  return std::nullopt;
}

// One spatial dimension more in front for 1D operands (cuDNN's descriptors start at 4D):
// `unit` is the value the new dimension takes (1 for extents, strides, dilations and
// windows; 0 for padding).
std::vector<int64_t> lift_1d(std::vector<int64_t> spatial, int64_t unit) {
  if (spatial.size() == 1) spatial.insert(spatial.begin(), unit);
  return spatial;
}

std::vector<int64_t> batch_channels_spatial(int64_t batch, int64_t channels, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> shape{batch, channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return shape;
}

// The output's spatial extents from its parameter's shape, lifted like the input's.
std::vector<int64_t> output_spatial(const ir::PrimFunc& func, int y_param) {
  const std::vector<int64_t>& shape = func->params[y_param].buffer->shape;
  return lift_1d(std::vector<int64_t>(shape.begin() + 2, shape.end()), 1);
}

int64_t product(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  for (int64_t e : extents) p *= e;
  return p;
}

// The batch entries per slice: the largest divisor of `batch` whose slices of every operand
// (`entry_elements` each per batch entry) fit cuDNN's int; nullopt when one entry does not.
std::optional<int64_t> slice_size(int64_t batch, std::initializer_list<int64_t> entry_elements) {
  int64_t largest = 1;
  for (int64_t e : entry_elements) largest = std::max(largest, e);
  if (largest > kIntMax) return std::nullopt;
  for (int64_t size = batch; size >= 1; --size) {
    if (batch % size == 0 && size * largest <= kIntMax) return size;
  }
  return std::nullopt;
}

// X and Y of one batch slice, [slice, channels, spatial...] each, and how many slices the
// batch makes; nullopt with `why_not` when one batch entry or an extent is too large.
struct SlicedOperands {
  int slices = 1;
  CudnnTensorDims x, y;
};
std::optional<SlicedOperands> slice_operands(int64_t batch, int64_t x_channels, const std::vector<int64_t>& x_size,
                                             int64_t y_channels, const std::vector<int64_t>& y_size,
                                             std::string& why_not) {
  std::optional<int64_t> slice = slice_size(batch, {x_channels * product(x_size), y_channels * product(y_size)});
  if (!slice) {
    why_not = "one batch entry holds more elements than cuDNN's 32-bit int counts";
    return std::nullopt;
  }
  auto x = packed_tensor(batch_channels_spatial(*slice, x_channels, x_size));
  auto y = packed_tensor(batch_channels_spatial(*slice, y_channels, y_size));
  if (!x || !y) {
    why_not = "an extent or stride does not fit cuDNN's 32-bit int";
    return std::nullopt;
  }
  return SlicedOperands{static_cast<int>(batch / *slice), *x, *y};
}

// The forward convolution's output extent (floor rule), or -1 when the window does not fit.
int64_t forward_extent(int64_t input, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  int64_t span = dilation * (kernel - 1) + 1;
  if (input + 2 * padding < span) return -1;
  return (input + 2 * padding - span) / stride + 1;
}

std::optional<CudnnPlan> plan_convolution(const ops::Workload& workload, const ops::OpArgs& args, bool transposed,
                                          std::string& why_not) {
  std::optional<Types> types = types_of(args.get_dtype("dtype"), why_not);
  if (!types) return std::nullopt;
  const ir::PrimFunc& func = workload.func;
  CudnnConvolutionPlan plan;
  plan.transposed = transposed;
  plan.data_type = types->data;
  plan.compute_type = types->compute;
  plan.math_type = types->math;
  plan.x_param = param_index(func, "X");
  plan.w_param = param_index(func, "W");
  plan.y_param = param_index(func, "Y");
  if (plan.x_param < 0 || plan.w_param < 0 || plan.y_param < 0) {
    why_not = "the function has no X, W or Y parameter";
    return std::nullopt;
  }
  int64_t batch = args.get_int("batch"), in_channels = args.get_int("in_channels");
  int64_t out_channels = args.get_int("out_channels"), groups = args.get_int("groups");
  std::vector<int64_t> size = lift_1d(args.get_shape("size"), 1);
  std::vector<int64_t> kernel = lift_1d(args.get_shape("kernel"), 1);
  std::vector<int64_t> stride = lift_1d(args.get_shape("stride"), 1);
  std::vector<int64_t> padding = lift_1d(args.get_shape("padding"), 0);
  std::vector<int64_t> dilation = lift_1d(args.get_shape("dilation"), 1);
  std::vector<int64_t> out_size = output_spatial(func, plan.y_param);

  // The forward conv cuDNN computes maps `from` to `to`: X to Y, or for a transposed conv
  // Y's shape to X's. Backward-data exists only where that forward conv's output is X
  // exactly; torch's output_padding below the stride keeps it so.
  const std::vector<int64_t>& from = transposed ? out_size : size;
  const std::vector<int64_t>& to = transposed ? size : out_size;
  for (size_t d = 0; d < from.size(); ++d) {
    int64_t extent = forward_extent(from[d], kernel[d], stride[d], padding[d], dilation[d]);
    if (extent != to[d]) {
      why_not = fmt::format(
          "the forward convolution cuDNN would compute from {} gives {} along spatial dimension {}, not {}{}",
          shape_text(from), extent, d, to[d], transposed ? " (output_padding not below the stride)" : "");
      return std::nullopt;
    }
  }
  std::vector<int64_t> filter = transposed ? batch_channels_spatial(in_channels, out_channels / groups, kernel)
                                           : batch_channels_spatial(out_channels, in_channels / groups, kernel);
  std::optional<SlicedOperands> operands = slice_operands(batch, in_channels, size, out_channels, out_size, why_not);
  if (!operands) return std::nullopt;
  auto filter_ints = to_ints(filter), padding_ints = to_ints(padding), stride_ints = to_ints(stride);
  auto dilation_ints = to_ints(dilation);
  if (!filter_ints || !padding_ints || !stride_ints || !dilation_ints || groups > kIntMax) {
    why_not = "an extent or stride does not fit cuDNN's 32-bit int";
    return std::nullopt;
  }
  plan.batch_slices = operands->slices;
  plan.x = operands->x;
  plan.y = operands->y;
  plan.filter = *filter_ints;
  plan.padding = *padding_ints;
  plan.stride = *stride_ints;
  plan.dilation = *dilation_ints;
  plan.groups = static_cast<int>(groups);
  if (args.get_bool("bias")) {
    plan.bias_param = param_index(func, "bias");
    if (plan.bias_param < 0) {
      why_not = "bias=true but the function has no bias parameter";
      return std::nullopt;
    }
    plan.bias = packed_tensor(batch_channels_spatial(1, out_channels, std::vector<int64_t>(size.size(), 1)));
  }
  return plan;
}

std::optional<CudnnPlan> plan_pooling(const ops::Workload& workload, const ops::OpArgs& args, bool max,
                                      std::string& why_not) {
  std::optional<Types> types = types_of(args.get_dtype("dtype"), why_not);
  if (!types) return std::nullopt;
  if (max && args.get_int("dilation") != 1) {
    why_not = "cuDNN pooling has no dilation";
    return std::nullopt;
  }
  if (max && args.get_bool("return_indices")) {
    why_not = "cuDNN pooling does not return the maxima's indices";
    return std::nullopt;
  }
  const ir::PrimFunc& func = workload.func;
  CudnnPoolingPlan plan;
  plan.data_type = types->data;
  plan.mode = max ? CudnnPoolingMode::kMax
                  : (args.get_bool("count_include_pad") ? CudnnPoolingMode::kAverageIncludePadding
                                                         : CudnnPoolingMode::kAverageExcludePadding);
  plan.x_param = param_index(func, "X");
  plan.y_param = param_index(func, "Y");
  if (plan.x_param < 0 || plan.y_param < 0) {
    why_not = "the function has no X or Y parameter";
    return std::nullopt;
  }
  const std::vector<int64_t>& x_shape = func->params[plan.x_param].buffer->shape;
  int rank = static_cast<int>(x_shape.size()) - 2;
  int64_t kernel = args.get_int("kernel"), stride = args.get_int("stride"), padding = args.get_int("padding");
  std::vector<int64_t> size = lift_1d(std::vector<int64_t>(x_shape.begin() + 2, x_shape.end()), 1);
  std::vector<int64_t> window = lift_1d(std::vector<int64_t>(rank, kernel), 1);
  std::vector<int64_t> strides = lift_1d(std::vector<int64_t>(rank, stride), 1);
  std::vector<int64_t> paddings = lift_1d(std::vector<int64_t>(rank, padding), 0);
  std::vector<int64_t> out_size = output_spatial(func, plan.y_param);
  // cuDNN sizes its output by the floor rule only; ceil_mode matches it where rounding up
  // adds no window (and then the divisors agree too: no window overhangs the padding).
  for (size_t d = 0; d < size.size(); ++d) {
    int64_t extent = forward_extent(size[d], window[d], strides[d], paddings[d], 1);
    if (extent != out_size[d]) {
      why_not = fmt::format("ceil_mode gives {} outputs along spatial dimension {} where cuDNN's floor rule gives {}",
                            out_size[d], d, extent);
      return std::nullopt;
    }
  }
  int64_t batch = x_shape[0], channels = x_shape[1];
  std::optional<SlicedOperands> operands = slice_operands(batch, channels, size, channels, out_size, why_not);
  if (!operands) return std::nullopt;
  auto window_ints = to_ints(window), padding_ints = to_ints(paddings), stride_ints = to_ints(strides);
  if (!window_ints || !padding_ints || !stride_ints) {
    why_not = "an extent or stride does not fit cuDNN's 32-bit int";
    return std::nullopt;
  }
  plan.batch_slices = operands->slices;
  plan.x = operands->x;
  plan.y = operands->y;
  plan.window = *window_ints;
  plan.padding = *padding_ints;
  plan.stride = *stride_ints;
  return plan;
}

std::optional<CudnnPlan> plan_softmax(const ops::Workload& workload, const ops::OpArgs& args, bool log,
                                      std::string& why_not) {
  std::optional<Types> types = types_of(args.get_dtype("dtype"), why_not);
  if (!types) return std::nullopt;
  const std::vector<int64_t>& shape = args.get_shape("shape");
  int rank = static_cast<int>(shape.size());
  int64_t axis = args.get_int("axis");
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= shape[d];
  CudnnSoftmaxPlan plan;
  plan.algorithm = log ? CudnnSoftmaxAlgorithm::kLog : CudnnSoftmaxAlgorithm::kAccurate;
  plan.data_type = types->data;
  plan.x_param = param_index(workload.func, "X");
  plan.y_param = output_index(workload.func);
  if (plan.x_param < 0 || plan.y_param < 0) {
    why_not = "the function has no X parameter or not one output";
    return std::nullopt;
  }
  std::optional<int64_t> slice = slice_size(outer, {shape[axis] * inner});
  if (!slice) {
    why_not = "one softmax row holds more elements than cuDNN's 32-bit int counts";
    return std::nullopt;
  }
  plan.batch_slices = static_cast<int>(outer / *slice);
  auto x = packed_tensor({*slice, shape[axis], inner, 1});
  if (!x) {
    why_not = "an extent or stride does not fit cuDNN's 32-bit int";
    return std::nullopt;
  }
  plan.x = *x;
  return plan;
}

}  // namespace

std::string to_string(CudnnDataType type) {
  switch (type) {
    case CudnnDataType::kFloat: return "f32";
    case CudnnDataType::kDouble: return "f64";
    case CudnnDataType::kHalf: return "f16";
    case CudnnDataType::kBfloat16: return "bf16";
  }
  return "?";
}

int64_t element_bytes(CudnnDataType type) {
  switch (type) {
    case CudnnDataType::kFloat: return 4;
    case CudnnDataType::kDouble: return 8;
    case CudnnDataType::kHalf:
    case CudnnDataType::kBfloat16: return 2;
  }
  return 0;
}

std::string to_string(CudnnMathType math) {
  switch (math) {
    case CudnnMathType::kDefault: return "default math";
    case CudnnMathType::kTensorOp: return "tensor-op math";
    case CudnnMathType::kFma: return "FMA math";
  }
  return "?";
}

std::optional<CudnnTensorDims> packed_tensor(const std::vector<int64_t>& shape) {
  CudnnTensorDims t;
  t.strides.assign(shape.size(), 1);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > kIntMax) return std::nullopt;
    t.strides[d] = static_cast<int>(stride);
    stride *= shape[d];
    if (stride > kIntMax) return std::nullopt;  // cuDNN counts the elements in an int too
  }
  for (int64_t extent : shape) t.dims.push_back(static_cast<int>(extent));
  return t;
}

std::optional<CudnnPlan> plan_cudnn(const ops::Workload& workload, std::string& why_not) {
  const std::string& kind = workload.op->name;
  ops::OpArgs args = ops::OpRegistry::global().parse(workload.spec);
  for (const char* conv : {"conv1d", "conv2d", "conv3d"}) {
    if (kind == conv) return plan_convolution(workload, args, false, why_not);
  }
  for (const char* conv : {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}) {
    if (kind == conv) return plan_convolution(workload, args, true, why_not);
  }
  for (const char* pool : {"max_pool1d", "max_pool2d", "max_pool3d"}) {
    if (kind == pool) return plan_pooling(workload, args, true, why_not);
  }
  for (const char* pool : {"avg_pool1d", "avg_pool2d", "avg_pool3d"}) {
    if (kind == pool) return plan_pooling(workload, args, false, why_not);
  }
  if (kind == "softmax" || kind == "log_softmax") return plan_softmax(workload, args, kind == "log_softmax", why_not);
  if (kind == "depthwise_separable_conv2d") {
    why_not = "two convolutions in a row (depthwise, then pointwise): the cuDNN baseline is one library call per op";
  } else {
    why_not = "cuDNN applies to convolutions, pooling and softmax only";
  }
  return std::nullopt;
}

}  // namespace dragon::bench
