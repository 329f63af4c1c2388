// Max and average pooling over 1, 2 or 3 spatial axes of an N x C x spatial... tensor,
// with torch.nn.MaxPoolNd / AvgPoolNd semantics (KernelBench level 1, ids 41-46).
// Not adaptive pooling, and not channels-last layouts.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"

namespace dragon::ops {
namespace {

enum class PoolKind : uint8_t { kMax, kAvg };

// Names of the spatial size parameters, as torch's docs name the axes (L; H, W; D, H, W).
std::vector<std::string> spatial_names(int rank) {
  if (rank == 1) return {"length"};
  if (rank == 2) return {"height", "width"};
  return {"depth", "height", "width"};
}

// Floor division that rounds toward negative infinity (torch's div_rtn): the numerator
// of the output size is negative when the window is larger than the padded input.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// torch's pooling_output_shape: ceil_mode rounds up, but the last window must start
// inside the input or its left padding.
int64_t pooled_size(int64_t input, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode) {
  int64_t out = floor_div(input + 2 * padding - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= input + padding) --out;
  return out;
}

struct PoolAxis {
  int64_t input = 0;
  int64_t output = 0;
  // Extent of the padded input: `padding` on both sides, and more on the right where a
  // ceil_mode window runs past it.
  int64_t padded = 0;
};

struct PoolConfig {
  int64_t batch = 0, channels = 0;
  int64_t kernel = 0, stride = 0, padding = 0, dilation = 1;
  std::vector<PoolAxis> axes;
  DataType dtype;

  int rank() const { return static_cast<int>(axes.size()); }
  std::vector<int64_t> input_shape() const { return with_spatial(&PoolAxis::input); }
  std::vector<int64_t> padded_shape() const { return with_spatial(&PoolAxis::padded); }
  std::vector<int64_t> output_shape() const { return with_spatial(&PoolAxis::output); }
  std::vector<int64_t> with_spatial(int64_t PoolAxis::*extent) const {
    std::vector<int64_t> s{batch, channels};
    for (const PoolAxis& a : axes) s.push_back(a.*extent);
    return s;
  }
  bool needs_padding() const {
    for (const PoolAxis& a : axes) {
      if (a.padded != a.input) return true;
    }
    return false;
  }
};

// Reads and validates the parameters, raising what torch would reject as user errors.
PoolConfig read_config(const OpArgs& args, int rank, PoolKind kind) {
  PoolConfig config;
  config.batch = args.get_int("batch");
  config.channels = args.get_int("channels");
  config.kernel = args.get_int("kernel");
  config.stride = args.get_int("stride");
  config.padding = args.get_int("padding");
  config.dilation = kind == PoolKind::kMax ? args.get_int("dilation") : 1;
  config.dtype = args.get_dtype("dtype");
  bool ceil_mode = args.get_bool("ceil_mode");

  int64_t effective_kernel = config.dilation * (config.kernel - 1) + 1;
  args.require(config.padding <= effective_kernel / 2, "padding",
               fmt::format("{} is more than half the effective kernel size {} (dilation * (kernel - 1) + 1)",
                           config.padding, effective_kernel));
  // torch's 3-d pooling checks the padding against the kernel itself, not the dilated one.
  if (rank == 3) {
    args.require(config.padding <= config.kernel / 2, "padding",
                 fmt::format("{} is more than half the kernel size {}", config.padding, config.kernel));
  }
  for (const std::string& name : spatial_names(rank)) {
    PoolAxis axis;
    axis.input = args.get_int(name);
    if (kind == PoolKind::kAvg && rank == 3) {
      args.require(axis.input >= config.kernel, name,
                   fmt::format("{} is smaller than the kernel size {}", axis.input, config.kernel));
    }
    axis.output = pooled_size(axis.input, config.kernel, config.stride, config.padding, config.dilation, ceil_mode);
    args.require(axis.output >= 1, name,
                 fmt::format("input size {} gives output size {} with kernel {}, stride {}, padding {}, dilation {}; "
                             "it must be at least 1",
                             axis.input, axis.output, config.kernel, config.stride, config.padding, config.dilation));
    int64_t last_window_end = (axis.output - 1) * config.stride + effective_kernel;
    axis.padded = std::max(axis.input + 2 * config.padding, last_window_end);
    config.axes.push_back(axis);
  }
  return config;
}

// v * factor, leaving out a factor of one so unit strides read naturally.
Expr scaled(Expr v, int64_t factor) { return factor == 1 ? v : v * ir::make_const(v.dtype(), factor); }

// The input with its padding as a stage of its own (the identity when there is none):
// X_pad[n, c, p...] = X[n, c, p - padding...] inside the input, else `pad_value`.
Tensor pad_input(FunctionBuilder& fb, const PoolConfig& config, const Tensor& x, Expr pad_value) {
  if (!config.needs_padding()) return x;
  return fb.compute("X_pad", config.padded_shape(), [&](const IndexVars& i) {
    std::vector<Expr> at{i[0], i[1]};
    Expr inside;
    for (int a = 0; a < config.rank(); ++a) {
      const PoolAxis& axis = config.axes[a];
      Expr p = i[2 + a];
      std::vector<Expr> conditions;
      if (config.padding > 0) conditions.push_back(p >= config.padding);
      if (axis.padded > config.padding + axis.input) conditions.push_back(p < config.padding + axis.input);
      for (Expr& c : conditions) inside = inside.defined() ? (inside && c) : c;
      at.push_back(config.padding > 0 ? p - config.padding : p);
    }
    // select() evaluates only the chosen operand, so the padding never loads out of bounds.
    return ir::select(inside, x(at), pad_value);
  });
}

// Element (n, c, o * stride + r * dilation ...) of the padded input: the r-th window
// element of output position o.
Expr window_element(const PoolConfig& config, const Tensor& padded, const IndexVars& i, const IndexVars& r) {
  std::vector<Expr> at{i[0], i[1]};
  for (int a = 0; a < config.rank(); ++a) at.push_back(scaled(i[2 + a], config.stride) + scaled(r[a], config.dilation));
  return padded(at);
}

std::vector<int64_t> window_shape(const PoolConfig& config) {
  return std::vector<int64_t>(config.rank(), config.kernel);
}

// Indices of the maxima into each input plane, as torch's return_indices gives them
// (flattened over the spatial axes): the first maximum's offset inside the window, then
// that offset turned into input coordinates.
Tensor max_indices(FunctionBuilder& fb, const PoolConfig& config, const Tensor& padded) {
  const int rank = config.rank();
  const DataType i64 = DataType::i64();
  Tensor offset = fb.arg_reduce(
      "Y_window_offset", config.output_shape(), window_shape(config), /*find_max=*/true,
      [&](const IndexVars& i, const IndexVars& r) { return window_element(config, padded, i, r); },
      [&](const IndexVars& r) {
        Expr flat = ir::cast(i64, r[0]);
        for (int a = 1; a < rank; ++a) flat = flat * config.kernel + ir::cast(i64, r[a]);
        return flat;
      });
  return fb.compute("Y_indices", config.output_shape(), [&](const IndexVars& i) {
    Expr w = offset(std::vector<Expr>(i.begin(), i.end()));
    Expr flat;
    for (int a = 0; a < rank; ++a) {
      int64_t inner = 1;
      for (int b = a + 1; b < rank; ++b) inner *= config.kernel;
      Expr r = inner == 1 ? w : ir::floordiv(w, inner);
      if (a > 0) r = ir::floormod(r, config.kernel);
      Expr pos = scaled(ir::cast(i64, i[2 + a]), config.stride) + scaled(r, config.dilation);
      if (config.padding > 0) {
        pos = pos - config.padding;
        // Only a window with no input element above -inf keeps offset 0, which may lie in
        // the left padding; torch then reports the first window position at or after 0.
        pos = config.dilation == 1 ? ir::max(pos, ir::make_zero(i64))
                                   : ir::select(pos < 0, ir::floormod(pos, config.dilation), pos);
      }
      flat = flat.defined() ? flat * config.axes[a].input + pos : pos;
    }
    return flat;
  });
}

ir::PrimFunc build_max_pool(const OpArgs& args, int rank) {
  PoolConfig config = read_config(args, rank, PoolKind::kMax);
  FunctionBuilder fb(fmt::format("max_pool{}d", rank));
  Tensor x = fb.input("X", config.dtype, config.input_shape());
  // -inf padding never wins a maximum, as torch's padding is never read.
  Tensor padded = pad_input(fb, config, x, ir::min_value(config.dtype));
  Tensor y = fb.reduce("Y", config.output_shape(), window_shape(config), config.dtype, Reducer::maximum(),
                       [&](const IndexVars& i, const IndexVars& r) { return window_element(config, padded, i, r); });
  if (!args.get_bool("return_indices")) return fb.build({y});
  return fb.build({y, max_indices(fb, config, padded)});
}

// Number of elements torch divides a window's sum by along one axis, at output position
// `o`: the window clipped to the padded input (count_include_pad) or to the input itself.
// A constant where no window is clipped.
Expr avg_window_size(const PoolConfig& config, const PoolAxis& axis, bool count_include_pad, const Var& o) {
  bool overhangs = (axis.output - 1) * config.stride - config.padding + config.kernel > axis.input + config.padding;
  if (!overhangs && (count_include_pad || config.padding == 0)) return ir::make_const(o.dtype(), config.kernel);
  Expr start = config.padding > 0 ? scaled(o, config.stride) - config.padding : scaled(o, config.stride);
  if (count_include_pad) {
    return ir::min(start + config.kernel, ir::make_const(o.dtype(), axis.input + config.padding)) - start;
  }
  Expr clipped_start = config.padding > 0 ? ir::max(start, ir::make_zero(o.dtype())) : start;
  return ir::min(start + config.kernel, ir::make_const(o.dtype(), axis.input)) - clipped_start;
}

ir::PrimFunc build_avg_pool(const OpArgs& args, int rank) {
  PoolConfig config = read_config(args, rank, PoolKind::kAvg);
  bool count_include_pad = args.get_bool("count_include_pad");
  // Sums of f16/bf16 values accumulate in f32, as torch's kernels do.
  DataType acc = config.dtype.bits() == 16 ? DataType::f32() : config.dtype;

  FunctionBuilder fb(fmt::format("avg_pool{}d", rank));
  Tensor x = fb.input("X", config.dtype, config.input_shape());
  Tensor padded = pad_input(fb, config, x, ir::make_zero(config.dtype));
  Tensor sum = fb.reduce("Y_sum", config.output_shape(), window_shape(config), acc, Reducer::sum(),
                         [&](const IndexVars& i, const IndexVars& r) { return window_element(config, padded, i, r); });
  Tensor y = fb.compute("Y", config.output_shape(), [&](const IndexVars& i) {
    int64_t constant = 1;
    Expr varying;
    for (int a = 0; a < rank; ++a) {
      Expr size = avg_window_size(config, config.axes[a], count_include_pad, i[2 + a]);
      if (auto c = ir::as_const_int(size)) {
        constant *= *c;
      } else {
        varying = varying.defined() ? varying * size : size;
      }
    }
    Expr divisor = varying.defined() ? ir::cast(acc, scaled(varying, constant))
                                     : ir::make_const(acc, static_cast<double>(constant));
    return ir::cast(config.dtype, sum(std::vector<Expr>(i.begin(), i.end())) / divisor);
  });
  return fb.build({y});
}

// Parameters shared by every pooling kind: the input's shape, then the window.
std::vector<OpParam> pool_params(int rank, PoolKind kind) {
  std::vector<OpParam> params{int_param("batch", 2, "N, the batch size"),
                              int_param("channels", 4, "C, the number of channels")};
  const int64_t default_size = rank == 1 ? 64 : rank == 2 ? 16 : 8;
  for (const std::string& name : spatial_names(rank)) {
    params.push_back(int_param(name, default_size, "input " + name));
  }
  params.push_back(int_param("kernel", 2, "window size along every spatial axis"));
  params.push_back(int_param("stride", 2, "window step along every spatial axis (torch's default is the kernel size)"));
  params.push_back(int_param("padding", 0, "implicit padding on both sides of every spatial axis", /*min_value=*/0));
  if (kind == PoolKind::kMax) {
    params.push_back(int_param("dilation", 1, "spacing between window elements"));
  }
  params.push_back(bool_param("ceil_mode", false, "round the output size up instead of down"));
  if (kind == PoolKind::kMax) {
    params.push_back(
        bool_param("return_indices", false, "second output: i64 index of each maximum into its flattened input plane"));
  } else {
    params.push_back(bool_param("count_include_pad", true, "padding counts in each window's divisor"));
  }
  params.push_back(dtype_param("dtype", "f32", "element type of the input and output"));
  return params;
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  const char* layouts[] = {"N x C x L", "N x C x H x W", "N x C x D x H x W"};
  for (int rank = 1; rank <= 3; ++rank) {
    registry.add(OpKind{
        fmt::format("max_pool{}d", rank),
        "pool",
        fmt::format("torch.nn.MaxPool{}d over an {} input, with padding, dilation, ceil_mode and return_indices "
                    "(KernelBench {})",
                    rank, layouts[rank - 1], 40 + rank),
        pool_params(rank, PoolKind::kMax),
        [rank](const OpArgs& args) { return build_max_pool(args, rank); },
    });
  }
  for (int rank = 1; rank <= 3; ++rank) {
    registry.add(OpKind{
        fmt::format("avg_pool{}d", rank),
        "pool",
        fmt::format("torch.nn.AvgPool{}d over an {} input, with padding, ceil_mode and count_include_pad "
                    "(KernelBench {})",
                    rank, layouts[rank - 1], 43 + rank),
        pool_params(rank, PoolKind::kAvg),
        [rank](const OpArgs& args) { return build_avg_pool(args, rank); },
    });
  }
}

}  // namespace dragon::ops
