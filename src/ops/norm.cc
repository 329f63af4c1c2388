// Normalisation ops: batch, instance, group and layer norm (statistics stages, then an
// apply stage), and the norms KernelBench writes by hand: RMS, Frobenius, L1 and L2
// (KernelBench level 1, 33-40). Not the fused residual/norm patterns of the fused family.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> slice(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return {dims.begin() + static_cast<std::ptrdiff_t>(begin), dims.begin() + static_cast<std::ptrdiff_t>(end)};
}

// The index of x read for statistic `i` at position `r` of its reduced region.
using GatherFn = std::function<std::vector<Expr>(const IndexVars& i, const IndexVars& r)>;

struct Moments {
  Tensor mean;     // stat_shape, compute type (element type for batch_norm's running mean)
  Tensor inv_std;  // 1 / sqrt(biased variance + eps), what torch saves as invstd
};

// Mean and biased variance of x over each statistic's region, in two passes: the sum,
// then the sum of squared deviations from the mean. torch uses Welford's one-pass update;
// two passes are as robust (no E[x^2] - E[x]^2 cancellation on offset data) and keep
// every stage a plain reduction that schedules can split and parallelise.
Moments moments(FunctionBuilder& fb, const Tensor& x, DataType math, const std::vector<int64_t>& stat_shape,
                const std::vector<int64_t>& reduce_shape, double eps, const GatherFn& at) {
  double count = static_cast<double>(product(reduce_shape));
  Tensor x_sum = fb.reduce("x_sum", stat_shape, reduce_shape, math, Reducer::sum(),
                           [&](const IndexVars& i, const IndexVars& r) { return ir::cast(math, x(at(i, r))); });
  Tensor mean =
      fb.compute("mean", stat_shape, [&](const IndexVars& i) { return x_sum(to_exprs(i)) / count; });
  Tensor sq_dev_sum = fb.reduce("sq_dev_sum", stat_shape, reduce_shape, math, Reducer::sum(),
                                [&](const IndexVars& i, const IndexVars& r) {
                                  Expr dev = ir::cast(math, x(at(i, r))) - mean(to_exprs(i));
                                  return dev * dev;
                                });
  Tensor inv_std = fb.compute("inv_std", stat_shape, [&](const IndexVars& i) {
    return ir::rsqrt(sq_dev_sum(to_exprs(i)) / count + eps);
  });
  return {mean, inv_std};
}

// y = (x - mean) * inv_std [* weight + bias] over `shape`; `stat_of` maps an element's
// index to its statistic's index, `param_of` to its weight/bias index.
using IndexMap = std::function<std::vector<Expr>(const IndexVars& i)>;
Tensor apply_norm(FunctionBuilder& fb, const std::string& name, const Tensor& x, DataType dtype, DataType math,
                  const Moments& m, const IndexMap& stat_of, const Tensor* weight, const Tensor* bias,
                  const IndexMap& param_of) {
  return fb.compute(name, x.shape(), [&](const IndexVars& i) {
    std::vector<Expr> s = stat_of(i);
    Expr y = (ir::cast(math, x(to_exprs(i))) - ir::cast(math, m.mean(s))) * m.inv_std(s);
    if (weight != nullptr) y = y * ir::cast(math, (*weight)(param_of(i))) + ir::cast(math, (*bias)(param_of(i)));
    return ir::cast(dtype, y);
  });
}

std::string shape_text(const std::vector<int64_t>& shape) { return format_param_value(ParamValue(shape)); }

// nn.BatchNorm*d. KernelBench calls a freshly built module, which is in training mode
// (training=true here): the output uses the batch's own statistics per channel (axis 1)
// with the biased variance; the running-statistics update is a side effect no output
// shows and is left out. training=false is eval mode: the running mean and variance are
// inputs. weight and bias are inputs (KernelBench's are at their init values, 1 and 0).
ir::PrimFunc build_batch_norm(const OpArgs& args) {
  std::vector<int64_t> shape = args.get_shape("shape");
  args.require(shape.size() >= 2, "shape", fmt::format("{} needs at least (N, C)", shape_text(shape)));
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  int64_t channels = shape[1];
  std::vector<int64_t> reduce_shape = shape;  // N, then the spatial dims
  reduce_shape.erase(reduce_shape.begin() + 1);

  FunctionBuilder fb("batch_norm");
  Tensor x = fb.input("X", dtype, shape);
  Tensor weight = fb.input("weight", dtype, {channels});
  Tensor bias = fb.input("bias", dtype, {channels});
  Moments m;
  if (args.get_bool("training")) {
    // torch refuses too: the variance of one value says nothing.
    args.require(product(reduce_shape) > 1, "shape",
                 fmt::format("{} has one value per channel; training mode needs more", shape_text(shape)));
    m = moments(fb, x, math, {channels}, reduce_shape, args.get_float("eps"),
                [](const IndexVars& i, const IndexVars& r) {
                  std::vector<Expr> at = to_exprs(r);
                  at.insert(at.begin() + 1, i[0]);
                  return at;
                });
  } else {
    m.mean = fb.input("running_mean", dtype, {channels});
    Tensor running_var = fb.input("running_var", dtype, {channels}, ir::ValueDomain::positive());
    m.inv_std = fb.compute("inv_std", {channels}, [&](const IndexVars& i) {
      return ir::rsqrt(ir::cast(math, running_var(i[0])) + args.get_float("eps"));
    });
  }
  auto channel = [](const IndexVars& i) { return std::vector<Expr>{i[1]}; };
  Tensor y = apply_norm(fb, "batch_norm", x, dtype, math, m, channel, &weight, &bias, channel);
  return fb.build({y});
}

// nn.InstanceNorm*d with its defaults: statistics per (sample, channel) over the spatial
// dims, biased variance, no running statistics (track_running_stats=False, so training
// and eval mode agree) and no affine parameters unless `affine`.
ir::PrimFunc build_instance_norm(const OpArgs& args) {
  std::vector<int64_t> shape = args.get_shape("shape");
  args.require(shape.size() >= 3, "shape", fmt::format("{} needs at least (N, C, L)", shape_text(shape)));
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  bool affine = args.get_bool("affine");
  args.require(product(slice(shape, 2, shape.size())) > 1, "shape",
               fmt::format("{} has one spatial element; torch needs more than one", shape_text(shape)));

  FunctionBuilder fb("instance_norm");
  Tensor x = fb.input("X", dtype, shape);
  Tensor weight, bias;
  if (affine) {
    weight = fb.input("weight", dtype, {shape[1]});
    bias = fb.input("bias", dtype, {shape[1]});
  }
  Moments m = moments(fb, x, math, slice(shape, 0, 2), slice(shape, 2, shape.size()), args.get_float("eps"),
                      [](const IndexVars& i, const IndexVars& r) {
                        std::vector<Expr> at = to_exprs(i);
                        at.insert(at.end(), r.begin(), r.end());
                        return at;
                      });
  Tensor y = apply_norm(
      fb, "instance_norm", x, dtype, math, m, [](const IndexVars& i) { return std::vector<Expr>{i[0], i[1]}; },
      affine ? &weight : nullptr, affine ? &bias : nullptr, [](const IndexVars& i) { return std::vector<Expr>{i[1]}; });
  return fb.build({y});
}

// nn.GroupNorm: channels split into num_groups consecutive groups; statistics per
// (sample, group) over the group's channels and all spatial dims; per-channel affine.
// GroupNorm has no running statistics, so training and eval mode agree.
ir::PrimFunc build_group_norm(const OpArgs& args) {
  std::vector<int64_t> shape = args.get_shape("shape");
  args.require(shape.size() >= 2, "shape", fmt::format("{} needs at least (N, C)", shape_text(shape)));
  int64_t groups = args.get_int("num_groups");
  args.require(shape[1] % groups == 0, "num_groups",
               fmt::format("{} does not divide the {} channels of shape {}", groups, shape[1], shape_text(shape)));
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  int64_t group_size = shape[1] / groups;
  std::vector<int64_t> reduce_shape = slice(shape, 1, shape.size());
  reduce_shape[0] = group_size;

  FunctionBuilder fb("group_norm");
  Tensor x = fb.input("X", dtype, shape);
  Tensor weight = fb.input("weight", dtype, {shape[1]});
  Tensor bias = fb.input("bias", dtype, {shape[1]});
  Moments m = moments(fb, x, math, {shape[0], groups}, reduce_shape, args.get_float("eps"),
                      [&](const IndexVars& i, const IndexVars& r) {
                        std::vector<Expr> at = to_exprs(r);
                        at[0] = i[1] * group_size + r[0];
                        at.insert(at.begin(), i[0]);
                        return at;
                      });
  Tensor y = apply_norm(
      fb, "group_norm", x, dtype, math, m,
      [&](const IndexVars& i) { return std::vector<Expr>{i[0], ir::floordiv(i[1], group_size)}; }, &weight, &bias,
      [](const IndexVars& i) { return std::vector<Expr>{i[1]}; });
  return fb.build({y});
}

// nn.LayerNorm(normalized_shape = the last `normalized_dims` dims of shape): statistics
// per leading index, biased variance, elementwise affine over the normalised dims.
ir::PrimFunc build_layer_norm(const OpArgs& args) {
  std::vector<int64_t> shape = args.get_shape("shape");
  int64_t dims = args.get_int("normalized_dims");
  args.require(dims <= static_cast<int64_t>(shape.size()), "normalized_dims",
               fmt::format("{} exceeds the rank of shape {}", dims, shape_text(shape)));
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  bool affine = args.get_bool("elementwise_affine");
  size_t lead = shape.size() - static_cast<size_t>(dims);
  std::vector<int64_t> normalized = slice(shape, lead, shape.size());

  FunctionBuilder fb("layer_norm");
  Tensor x = fb.input("X", dtype, shape);
  Tensor weight, bias;
  if (affine) {
    weight = fb.input("weight", dtype, normalized);
    bias = fb.input("bias", dtype, normalized);
  }
  Moments m = moments(fb, x, math, slice(shape, 0, lead), normalized, args.get_float("eps"),
                      [](const IndexVars& i, const IndexVars& r) {
                        std::vector<Expr> at = to_exprs(i);
                        at.insert(at.end(), r.begin(), r.end());
                        return at;
                      });
  auto leading = [lead](const IndexVars& i) { return std::vector<Expr>(i.begin(), i.begin() + lead); };
  auto trailing = [lead](const IndexVars& i) { return std::vector<Expr>(i.begin() + lead, i.end()); };
  Tensor y = apply_norm(fb, "layer_norm", x, dtype, math, m, leading, affine ? &weight : nullptr,
                        affine ? &bias : nullptr, trailing);
  return fb.build({y});
}

// The hand-written norms of KernelBench 36, 38 and 39: y = x / scale, where scale comes
// from a sum over one axis: stat = sum over the axis of term(x), scale = finish(stat).
// For f16 and bf16 the sum and scale stay f32, where torch running KernelBench's
// composition would round x**2 and the mean to the element type: ours is the closer one.
struct AxisNorm {
  std::string name;
  std::string stat_name;   // the reduction stage
  std::string scale_name;  // the per-row scale stage
  std::function<Expr(Expr x)> term;
  std::function<Expr(Expr stat, double count, const OpArgs& args)> finish;
};

ir::PrimFunc build_axis_norm(const OpArgs& args, const AxisNorm& norm) {
  std::vector<int64_t> shape = args.get_shape("shape");
  int rank = static_cast<int>(shape.size());
  int64_t axis = args.get_int("axis");
  args.require(axis >= -rank && axis < rank, "axis",
               fmt::format("{} is out of range for shape {} of rank {}", axis, shape_text(shape), rank));
  if (axis < 0) axis += rank;
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  std::vector<int64_t> outer = shape;
  outer.erase(outer.begin() + axis);
  auto drop_axis = [axis](const IndexVars& i) {
    std::vector<Expr> o = to_exprs(i);
    o.erase(o.begin() + axis);
    return o;
  };

  FunctionBuilder fb(norm.name);
  Tensor x = fb.input("X", dtype, shape);
  Tensor stat = fb.reduce(norm.stat_name, outer, {shape[axis]}, math, Reducer::sum(),
                          [&](const IndexVars& i, const IndexVars& r) {
                            std::vector<Expr> at = to_exprs(i);
                            at.insert(at.begin() + axis, r[0]);
                            return norm.term(ir::cast(math, x(at)));
                          });
  Tensor scale = fb.compute(norm.scale_name, outer, [&](const IndexVars& i) {
    return norm.finish(stat(to_exprs(i)), static_cast<double>(shape[axis]), args);
  });
  Tensor y = fb.compute(norm.name, shape, [&](const IndexVars& i) {
    return ir::cast(dtype, ir::cast(math, x(to_exprs(i))) / scale(drop_axis(i)));
  });
  return fb.build({y});
}

// x / ||x||_F, the norm taken over the whole tensor (torch.norm(x, p='fro')).
ir::PrimFunc build_frobenius_norm(const OpArgs& args) {
  std::vector<int64_t> shape = args.get_shape("shape");
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  FunctionBuilder fb("frobenius_norm");
  Tensor x = fb.input("X", dtype, shape);
  Tensor sq_sum = fb.reduce("sq_sum", {}, shape, math, Reducer::sum(), [&](const IndexVars&, const IndexVars& r) {
    Expr v = ir::cast(math, x(to_exprs(r)));
    return v * v;
  });
  Tensor norm = fb.compute("norm", {}, [&](const IndexVars&) { return ir::sqrt(sq_sum(std::vector<Expr>{})); });
  Tensor y = fb.compute("frobenius_norm", shape, [&](const IndexVars& i) {
    return ir::cast(dtype, ir::cast(math, x(to_exprs(i))) / norm(std::vector<Expr>{}));
  });
  return fb.build({y});
}

OpParam eps_param() {
  return float_param("eps", 1e-5, "added under the square root (to the variance; rms_norm: to the mean square)");
}
OpParam norm_dtype_param() {
  return dtype_param("dtype", "f32",
                     "element type of X, Y and the affine parameters; statistics are f32 for f16 and bf16");
}

void register_axis_norms(OpRegistry& registry) {
  // KernelBench 36: x / sqrt(mean(x^2, dim=1, keepdim) + eps); no weight.
  AxisNorm rms{"rms_norm", "sq_sum", "rms", [](Expr v) { return v * v; },
               [](Expr stat, double count, const OpArgs& args) {
                 return ir::sqrt(stat / count + args.get_float("eps"));
               }};
  // KernelBench 38 divides by the mean of |x|, not by its sum as F.normalize(p=1) would.
  AxisNorm l1{"l1_norm", "abs_sum", "abs_mean", [](Expr v) { return ir::abs(v); },
              [](Expr stat, double count, const OpArgs&) { return stat / count; }};
  // KernelBench 39: x / torch.norm(x, p=2, dim=1, keepdim=True), without an eps.
  AxisNorm l2{"l2_norm", "sq_sum", "l2", [](Expr v) { return v * v; },
              [](Expr stat, double, const OpArgs&) { return ir::sqrt(stat); }};
  std::vector<OpParam> common = {shape_param("shape", std::vector<int64_t>{16, 1024}, "shape of X and Y"),
                                 axis_param("axis normalised over; negative counts from the end"),
                                 norm_dtype_param()};
  std::vector<OpParam> rms_params = common;
  rms_params[0] = shape_param("shape", std::vector<int64_t>{4, 16, 15, 15}, "shape of X and Y");
  rms_params.push_back(eps_param());
  registry.add(OpKind{"rms_norm", "norm", "Y = X / sqrt(mean(X^2 along axis) + eps) (KernelBench 36)", rms_params,
                      [rms](const OpArgs& args) { return build_axis_norm(args, rms); }});
  registry.add(OpKind{"l1_norm", "norm", "Y = X / mean(|X| along axis) (KernelBench 38)", common,
                      [l1](const OpArgs& args) { return build_axis_norm(args, l1); }});
  registry.add(OpKind{"l2_norm", "norm", "Y = X / sqrt(sum(X^2 along axis)) (KernelBench 39)", common,
                      [l2](const OpArgs& args) { return build_axis_norm(args, l2); }});
}

}  // namespace

void register_norm_ops(OpRegistry& registry) {
  std::vector<int64_t> image = {4, 8, 15, 15};
  registry.add(OpKind{
      "batch_norm",
      "norm",
      "BatchNorm: batch (training) or running (eval) statistics per channel, affine weight and bias (KernelBench 33)",
      {shape_param("shape", image, "shape of X and Y: (N, C, spatial...)"), eps_param(),
       bool_param("training", true,
                  "true: a module in training mode, as KernelBench calls it; false: eval mode, with the running "
                  "mean and variance as inputs"),
       norm_dtype_param()},
      build_batch_norm,
  });
  registry.add(OpKind{
      "instance_norm",
      "norm",
      "InstanceNorm: statistics per sample and channel over the spatial dims (KernelBench 34)",
      {shape_param("shape", image, "shape of X and Y: (N, C, spatial...)"), eps_param(),
       bool_param("affine", false, "per-channel weight and bias inputs (torch's default: none)"), norm_dtype_param()},
      build_instance_norm,
  });
  registry.add(OpKind{
      "group_norm",
      "norm",
      "GroupNorm: statistics per sample and group of channels, per-channel affine (KernelBench 35)",
      {shape_param("shape", image, "shape of X and Y: (N, C, spatial...)"),
       int_param("num_groups", 2, "number of channel groups; divides C"), eps_param(), norm_dtype_param()},
      build_group_norm,
  });
  registry.add(OpKind{
      "layer_norm",
      "norm",
      "LayerNorm over the trailing normalized_dims dims, elementwise affine (KernelBench 40)",
      {shape_param("shape", std::vector<int64_t>{16, 8, 64}, "shape of X and Y"),
       int_param("normalized_dims", 1, "how many trailing dims of shape torch's normalized_shape covers"), eps_param(),
       bool_param("elementwise_affine", true, "weight and bias inputs shaped like the normalised dims"),
       norm_dtype_param()},
      build_layer_norm,
  });
  register_axis_norms(registry);
  registry.add(OpKind{
      "frobenius_norm",
      "norm",
      "Y = X / sqrt(sum of X^2 over the whole tensor) (KernelBench 37)",
      {shape_param("shape", image, "shape of X and Y"), norm_dtype_param()},
      build_frobenius_norm,
  });
}

}  // namespace dragon::ops
