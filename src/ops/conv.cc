// Operator family "conv": 1D/2D/3D convolutions and transposed convolutions in NCW/NCHW/NCDHW
// layout with torch's weight layouts (grouped, strided, padded, dilated, optional bias), and
// the depthwise-separable 2D convolution. Pooling lives in pool.cc, not here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "dragon/support/error.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// The geometry of one convolution over rank() spatial dimensions, read from an op's
// arguments and validated there, so a builder below never sees a bad combination.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  std::vector<int64_t> size;            // input spatial extents
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  std::vector<int64_t> output_padding;  // transposed only; zeros otherwise
  std::vector<int64_t> out_size;        // output spatial extents

  int rank() const { return static_cast<int>(size.size()); }
  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  bool padded() const {
    for (int64_t p : padding) {
      if (p != 0) return true;
    }
    return false;
  }
};

// "3", "3x3", "3x3x3": how a spatial parameter of `rank` entries is spelled.
std::string example_shape(int rank) {
  std::string text = "3";
  for (int d = 1; d < rank; ++d) text += "x3";
  return text;
}

// A shape-valued parameter with one entry per spatial dimension. Exactly `rank` entries
// (no torch-style broadcast of a single value), so one workload has one canonical spec.
std::vector<int64_t> spatial_arg(const OpArgs& args, std::string_view name, int rank) {
  std::vector<int64_t> values = args.get_shape(name);
  args.require(static_cast<int>(values.size()) == rank, name,
               fmt::format("has {} entries but a {}D convolution needs {}, one per spatial dimension (like {})",
                           values.size(), rank, rank, example_shape(rank)));
  return values;
}

// The spatial parameters come from `args`; the channel counts from the caller, since the
// depthwise-separable op derives its depthwise conv's channels and groups.
ConvGeometry read_geometry(const OpArgs& args, int rank, bool transposed, int64_t in_channels, int64_t out_channels,
                           int64_t groups) {
  ConvGeometry g;
  g.batch = args.get_int("batch");
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.groups = groups;
  args.require(g.in_channels % g.groups == 0, "groups",
               fmt::format("{} groups do not divide in_channels={}", g.groups, g.in_channels));
  args.require(g.out_channels % g.groups == 0, "groups",
               fmt::format("{} groups do not divide out_channels={}", g.groups, g.out_channels));
  g.size = spatial_arg(args, "size", rank);
  g.kernel = spatial_arg(args, "kernel", rank);
  g.stride = spatial_arg(args, "stride", rank);
  g.padding = spatial_arg(args, "padding", rank);
  g.dilation = spatial_arg(args, "dilation", rank);
  g.output_padding = transposed ? spatial_arg(args, "output_padding", rank) : std::vector<int64_t>(rank, 0);
  for (int d = 0; d < rank; ++d) {
    int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;  // extent the dilated kernel covers
    if (!transposed) {
      int64_t padded = g.size[d] + 2 * g.padding[d];
      args.require(padded >= span, "kernel",
                   fmt::format("in spatial dimension {} the dilated kernel spans {} but the padded input has {}", d,
                               span, padded));
      g.out_size.push_back((padded - span) / g.stride[d] + 1);
    } else {
      // torch's rule: output padding only selects among outputs that stride or dilation
      // leave ambiguous.
      args.require(g.output_padding[d] < g.stride[d] || g.output_padding[d] < g.dilation[d], "output_padding",
                   fmt::format("in spatial dimension {} it is {}; it must be smaller than the stride ({}) or the "
                               "dilation ({})",
                               d, g.output_padding[d], g.stride[d], g.dilation[d]));
      int64_t out = (g.size[d] - 1) * g.stride[d] - 2 * g.padding[d] + span + g.output_padding[d];
      args.require(out >= 1, "padding",
                   fmt::format("in spatial dimension {} it leaves an output of {} elements", d, out));
      g.out_size.push_back(out);
    }
  }
  return g;
}

std::vector<int64_t> concat(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// The reduction axes of a convolution stage: the input channel within the group, then one
// tap per spatial dimension. Axes of extent 1 (the channel of a depthwise conv, the taps of
// a 1x1 kernel) are left out, so those convs get the loop nests one would write for them
// (depthwise: taps only; pointwise: channels only, like a matmul). One axis always remains.
struct ReduceAxes {
  std::vector<int64_t> extents;
  int channel = -1;       // position of the channel axis in extents, -1 when left out
  std::vector<int> taps;  // position of each spatial dimension's tap axis, -1 when left out

  explicit ReduceAxes(const ConvGeometry& g) {
    if (g.in_per_group() > 1) {
      channel = 0;
      extents.push_back(g.in_per_group());
    }
    for (int d = 0; d < g.rank(); ++d) {
      taps.push_back(g.kernel[d] > 1 ? static_cast<int>(extents.size()) : -1);
      if (g.kernel[d] > 1) extents.push_back(g.kernel[d]);
    }
    if (extents.empty()) {
      channel = 0;
      extents.push_back(1);
    }
  }
  std::optional<Expr> channel_var(const IndexVars& r) const {
    return channel < 0 ? std::nullopt : std::optional<Expr>(r[channel]);
  }
  std::optional<Expr> tap_var(const IndexVars& r, int d) const {
    return taps[d] < 0 ? std::nullopt : std::optional<Expr>(r[taps[d]]);
  }
};

// e * factor, without the multiplication when factor is 1 (keeps the IR text readable).
Expr scaled(const Expr& e, int64_t factor) { return factor == 1 ? e : e * factor; }

// Input position read by output position o at tap k: o*stride + k*dilation.
Expr window(const Expr& o, const std::optional<Expr>& k, int64_t stride, int64_t dilation) {
  Expr position = scaled(o, stride);
  return k ? position + scaled(*k, dilation) : position;
}

// The input channel that output channel `oc` reads at within-group channel `rc`:
// group(oc) * in_per_group + rc.
Expr input_channel(const ConvGeometry& g, const Expr& oc, const std::optional<Expr>& rc) {
  std::optional<Expr> base;
  if (g.groups > 1) {
    Expr group = g.out_per_group() == 1 ? oc : ir::floordiv(oc, g.out_per_group());
    base = scaled(group, g.in_per_group());
  }
  if (base && rc) return *base + *rc;
  if (base) return *base;
  if (rc) return *rc;
  return ir::make_zero(oc.dtype());
}

// Output channel `oc` within its group: the second index of a transposed conv's weight.
Expr channel_in_group(const ConvGeometry& g, const Expr& oc) {
  if (g.groups == 1) return oc;
  if (g.out_per_group() == 1) return ir::make_zero(oc.dtype());
  return ir::floormod(oc, g.out_per_group());
}

// X zero-padded by `padding` on both sides of each spatial dimension; X itself when there
// is no padding. The pad is its own stage, as in TOPI, so the conv body stays a plain
// multiply-accumulate and a schedule may inline the pad or not.
Tensor pad_input(FunctionBuilder& fb, const ConvGeometry& g, const Tensor& x) {
  if (!g.padded()) return x;
  std::vector<int64_t> shape = {g.batch, g.in_channels};
  for (int d = 0; d < g.rank(); ++d) shape.push_back(g.size[d] + 2 * g.padding[d]);
  return fb.compute("X_pad", shape, [&](const IndexVars& i) {
    std::vector<Expr> index = {i[0], i[1]};
    Expr inside;
    for (int d = 0; d < g.rank(); ++d) {
      Expr j = i[2 + d];
      int64_t p = g.padding[d];
      if (p == 0) {
        index.push_back(j);
        continue;
      }
      Expr in_bounds = j >= p && j < g.size[d] + p;
      inside = inside.defined() ? inside && in_bounds : in_bounds;
      index.push_back(j - p);
    }
    // select() evaluates only its chosen operand: the load never runs in the border.
    return ir::select(inside, x(index), ir::make_zero(x.dtype()));
  });
}

// The transposed conv's input laid out for a stride-1 convolution with the flipped kernel:
// stride-1 zeros between neighbouring inputs and dilation*(kernel-1)-padding zeros on each
// side (a negative amount crops), as TOPI's conv2d_transpose does. We chose this over a
// gather whose reduction body tests divisibility by the stride, because the conv stage that
// follows is then exactly the forward conv's loop nest and plain multiply-accumulate body,
// which is what tiling rules recognise; inlining this stage recovers the gather form.
// Input i lands at position i*stride + offset, offset = dilation*(kernel-1) - padding.
Tensor upsample_input(FunctionBuilder& fb, const ConvGeometry& g, const Tensor& x) {
  std::vector<int64_t> shape = {g.batch, g.in_channels};
  std::vector<int64_t> offset;
  bool identity = true;
  for (int d = 0; d < g.rank(); ++d) {
    int64_t halo = g.dilation[d] * (g.kernel[d] - 1);
    shape.push_back(g.out_size[d] + halo);
    offset.push_back(halo - g.padding[d]);
    identity = identity && g.stride[d] == 1 && offset[d] == 0 && shape.back() == g.size[d];
  }
  if (identity) return x;
  return fb.compute("X_upsample", shape, [&](const IndexVars& i) {
    std::vector<Expr> index = {i[0], i[1]};
    Expr inside;
    auto require = [&](Expr condition) { inside = inside.defined() ? inside && condition : condition; };
    for (int d = 0; d < g.rank(); ++d) {
      Expr j = i[2 + d];
      int64_t s = g.stride[d], off = offset[d];
      int64_t last = (g.size[d] - 1) * s + off;  // position of the last input
      Expr t = off == 0 ? j : (off > 0 ? j - off : j + (-off));
      if (off > 0) require(j >= off);
      if (shape[2 + d] - 1 > last) require(j <= last);
      if (s > 1) require(ir::eq(ir::floormod(t, s), 0));
      index.push_back(s > 1 ? ir::floordiv(t, s) : t);
    }
    if (!inside.defined()) return x(index);
    return ir::select(inside, x(index), ir::make_zero(x.dtype()));
  });
}

// out[n, oc, o...] = sum over rc, k... of in[n, input_channel(oc, rc), window(o, k)] times
// the weight, accumulated in `acc`. Forward: the weight is W[oc, rc, k...] and `in` the
// padded input read at o*stride + k*dilation. Transposed: W is stored [in, out/groups, k...]
// and read flipped, W[ic, oc in group, kernel-1-k...], and `in` is the upsampled input read
// at o + k*dilation (the stride already went into the upsampling).
Tensor convolve(FunctionBuilder& fb, const std::string& name, const ConvGeometry& g, const Tensor& in,
                const Tensor& w, DataType acc, bool transposed) {
  ReduceAxes axes(g);
  std::vector<int64_t> shape = concat({g.batch, g.out_channels}, g.out_size);
  return fb.reduce(name, shape, axes.extents, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
    Expr n = i[0], oc = i[1];
    std::optional<Expr> rc = axes.channel_var(r);
    Expr ic = input_channel(g, oc, rc);
    Expr zero = ir::make_zero(oc.dtype());
    std::vector<Expr> in_index = {n, ic};
    std::vector<Expr> w_index = transposed ? std::vector<Expr>{ic, channel_in_group(g, oc)}
                                           : std::vector<Expr>{oc, rc ? *rc : zero};
    for (int d = 0; d < g.rank(); ++d) {
      std::optional<Expr> k = axes.tap_var(r, d);
      in_index.push_back(window(i[2 + d], k, transposed ? 1 : g.stride[d], g.dilation[d]));
      Expr tap = k ? *k : zero;
      if (transposed && k) tap = ir::make_const(k->dtype(), static_cast<double>(g.kernel[d] - 1)) - *k;
      w_index.push_back(tap);
    }
    return ir::cast(acc, in(in_index)) * ir::cast(acc, w(w_index));
  });
}

// The last stage of a conv: acc + bias[channel] (bias may be absent), cast to `dtype`.
Tensor add_bias_and_cast(FunctionBuilder& fb, const std::string& name, const Tensor& acc,
                         const std::optional<Tensor>& bias, DataType dtype) {
  return fb.compute(name, acc.shape(), [&](const IndexVars& i) {
    Expr value = acc(std::vector<Expr>(i.begin(), i.end()));
    if (bias) value = value + ir::cast(acc.dtype(), (*bias)(i[1]));
    return ir::cast(dtype, value);
  });
}

std::string conv_name(int rank, bool transposed) {
  return fmt::format("{}{}d", transposed ? "conv_transpose" : "conv", rank);
}

ir::PrimFunc build_conv(const OpArgs& args, int rank, bool transposed) {
  ConvGeometry g = read_geometry(args, rank, transposed, args.get_int("in_channels"), args.get_int("out_channels"),
                                 args.get_int("groups"));
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  bool has_bias = args.get_bool("bias");

  FunctionBuilder fb(conv_name(rank, transposed));
  Tensor x = fb.input("X", dtype, concat({g.batch, g.in_channels}, g.size));
  Tensor w = fb.input("W", dtype,
                      transposed ? concat({g.in_channels, g.out_per_group()}, g.kernel)
                                 : concat({g.out_channels, g.in_per_group()}, g.kernel));
  std::optional<Tensor> bias;
  if (has_bias) bias = fb.input("bias", dtype, {g.out_channels});

  Tensor in = transposed ? upsample_input(fb, g, x) : pad_input(fb, g, x);
  bool epilogue = has_bias || acc != dtype;
  Tensor y = convolve(fb, epilogue ? "conv" : "Y", g, in, w, acc, transposed);
  if (epilogue) y = add_bias_and_cast(fb, "Y", y, bias, dtype);
  return fb.build({y});
}

// torch's depthwise-separable block: a depthwise Conv2d (groups = channels, optional bias)
// then a pointwise 1x1 Conv2d to out_channels (same bias setting). The depthwise result is
// materialised in `dtype`, as between the two torch modules.
ir::PrimFunc build_depthwise_separable_conv2d(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), channels = args.get_int("in_channels");
  int64_t out_channels = args.get_int("out_channels");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  bool has_bias = args.get_bool("bias");
  bool epilogue = has_bias || acc != dtype;

  ConvGeometry depthwise = read_geometry(args, 2, false, channels, channels, channels);
  ConvGeometry pointwise = depthwise;
  pointwise.out_channels = out_channels;
  pointwise.groups = 1;
  pointwise.size = depthwise.out_size;
  pointwise.kernel = pointwise.stride = pointwise.dilation = {1, 1};
  pointwise.padding = {0, 0};

  FunctionBuilder fb("depthwise_separable_conv2d");
  Tensor x = fb.input("X", dtype, concat({batch, channels}, depthwise.size));
  Tensor w_depthwise = fb.input("W_depthwise", dtype, concat({channels, 1}, depthwise.kernel));
  std::optional<Tensor> bias_depthwise, bias_pointwise;
  if (has_bias) bias_depthwise = fb.input("bias_depthwise", dtype, {channels});
  Tensor w_pointwise = fb.input("W_pointwise", dtype, {out_channels, channels, 1, 1});
  if (has_bias) bias_pointwise = fb.input("bias_pointwise", dtype, {out_channels});

  Tensor mid = convolve(fb, epilogue ? "depthwise_acc" : "depthwise", depthwise, pad_input(fb, depthwise, x),
                        w_depthwise, acc, false);
  if (epilogue) mid = add_bias_and_cast(fb, "depthwise", mid, bias_depthwise, dtype);
  Tensor y = convolve(fb, epilogue ? "pointwise_acc" : "Y", pointwise, mid, w_pointwise, acc, false);
  if (epilogue) y = add_bias_and_cast(fb, "Y", y, bias_pointwise, dtype);
  return fb.build({y});
}

// A shape parameter whose entries may be 0 (padding, output_padding).
OpParam non_negative_shape_param(std::string name, std::vector<int64_t> default_value, std::string help) {
  OpParam p = shape_param(std::move(name), std::move(default_value), std::move(help));
  p.min_value = 0;
  return p;
}

// Defaults small enough that `dragon run` on the interpreter takes well under a second.
struct ConvDefaults {
  int64_t batch, in_channels, out_channels;
  std::vector<int64_t> size;
};

std::vector<OpParam> conv_params(int rank, bool transposed, const ConvDefaults& defaults) {
  std::string dims = rank == 1 ? "L" : rank == 2 ? "HxW" : "DxHxW";
  std::vector<int64_t> ones(rank, 1), zeros(rank, 0), threes(rank, 3);
  std::vector<OpParam> params = {
      int_param("batch", defaults.batch, "batch size N"),
      int_param("in_channels", defaults.in_channels, "input channels C_in"),
      int_param("out_channels", defaults.out_channels, "output channels C_out"),
      shape_param("size", defaults.size, "input spatial extents, " + dims),
      shape_param("kernel", threes, "kernel extents, " + dims),
      shape_param("stride", ones, "stride per spatial dimension, " + dims),
      non_negative_shape_param("padding", zeros,
                               transposed ? "implicit zero padding removed from each side of the output, " + dims
                                          : "zero padding on each side of the input, " + dims),
  };
  if (transposed) {
    params.push_back(non_negative_shape_param(
        "output_padding", zeros, "extra outputs on the far side of each dimension (less than stride or dilation), " + dims));
  }
  params.push_back(shape_param("dilation", ones, "spacing between kernel taps, " + dims));
  params.push_back(int_param("groups", 1, "channel groups; in_channels and out_channels must be multiples"));
  params.push_back(bool_param("bias", false, "add a learned bias per output channel"));
  params.push_back(dtype_param("dtype", "f32", "element type of X, W, bias and Y (16-bit types accumulate in f32)"));
  return params;
}

void add_conv(OpRegistry& registry, int rank, bool transposed, const ConvDefaults& defaults, std::string summary) {
  registry.add(OpKind{
      conv_name(rank, transposed),
      "conv",
      std::move(summary),
      conv_params(rank, transposed, defaults),
      [rank, transposed](const OpArgs& args) { return build_conv(args, rank, transposed); },
  });
}

}  // namespace

void register_conv_ops(OpRegistry& registry) {
  add_conv(registry, 1, false, {2, 8, 16, {128}},
           "torch Conv1d, NCW, W[C_out, C_in/groups, K] (KernelBench 67, 76)");
  add_conv(registry, 2, false, {2, 8, 16, {16, 16}},
           "torch Conv2d, NCHW, W[C_out, C_in/groups, KH, KW]; depthwise with groups=in_channels, pointwise with "
           "kernel=1x1 (KernelBench 50, 55, 56, 62, 63, 80, 82-85, 87)");
  add_conv(registry, 3, false, {1, 4, 8, {8, 8, 8}},
           "torch Conv3d, NCDHW, W[C_out, C_in/groups, KD, KH, KW] (KernelBench 54, 59, 60, 66)");
  add_conv(registry, 1, true, {2, 8, 8, {128}},
           "torch ConvTranspose1d, NCW, W[C_in, C_out/groups, K] (KernelBench 64, 74, 79)");
  add_conv(registry, 2, true, {2, 8, 8, {16, 16}},
           "torch ConvTranspose2d, NCHW, W[C_in, C_out/groups, KH, KW] (KernelBench 57, 65, 69, 71, 75, 78, 81)");
  add_conv(registry, 3, true, {1, 4, 4, {8, 8, 8}},
           "torch ConvTranspose3d, NCDHW, W[C_in, C_out/groups, KD, KH, KW] (KernelBench 58, 61, 68, 70, 72, 73, 77)");
  registry.add(OpKind{
      "depthwise_separable_conv2d",
      "conv",
      "depthwise Conv2d (groups = in_channels) then pointwise 1x1 Conv2d, NCHW, torch weight layouts "
      "(KernelBench 86)",
      {int_param("batch", 2, "batch size N"), int_param("in_channels", 8, "input (and depthwise) channels C"),
       int_param("out_channels", 16, "output channels of the pointwise conv"),
       shape_param("size", std::vector<int64_t>{16, 16}, "input spatial extents, HxW"),
       shape_param("kernel", std::vector<int64_t>{3, 3}, "depthwise kernel extents, HxW"),
       shape_param("stride", std::vector<int64_t>{1, 1}, "depthwise stride, HxW"),
       non_negative_shape_param("padding", {1, 1}, "depthwise zero padding on each side, HxW"),
       shape_param("dilation", std::vector<int64_t>{1, 1}, "depthwise spacing between kernel taps, HxW"),
       bool_param("bias", false, "both convs add a learned bias per output channel"),
       dtype_param("dtype", "f32", "element type of inputs, the depthwise result and Y (16-bit types accumulate "
                                   "in f32)")},
      build_depthwise_separable_conv2d,
  });
}

}  // namespace dragon::ops
