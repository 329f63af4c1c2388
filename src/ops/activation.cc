// Activation ops: elementwise nonlinearities over any shape, and softmax / log_softmax
// along one axis (KernelBench level 1, 19-32 and 88). Formulas follow PyTorch's kernels;
// not the fused epilogues of other families.
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "hard_activations.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// `vars` with `index` inserted at position `axis`: the full index of an element whose
// other coordinates are `vars` and whose coordinate along `axis` is `index`.
std::vector<Expr> with_axis(const IndexVars& vars, int axis, Expr index) {
  std::vector<Expr> full = to_exprs(vars);
  full.insert(full.begin() + axis, std::move(index));
  return full;
}

// The axis parameter as a non-negative position; negative values count from the end,
// like torch's dim.
int resolve_axis(const OpArgs& args, int rank) {
  int64_t axis = args.get_int("axis");
  args.require(axis >= -rank && axis < rank, "axis",
               fmt::format("{} is out of range for a shape of rank {} (valid: {} to {})", axis, rank, -rank,
                           rank - 1));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// y = f(x) in the compute type.
using ScalarFn = std::function<Expr(Expr x, const OpArgs& args)>;
// Cross-parameter checks of an elementwise op, run before building.
using CheckFn = std::function<void(const OpArgs& args)>;

// An elementwise op: one compute stage named after the op over `shape`.
OpKind elementwise_op(std::string name, std::string summary, std::vector<OpParam> extra, ScalarFn fn,
                      CheckFn check = {}) {
  std::vector<OpParam> params = {shape_param("shape", std::vector<int64_t>{16, 1024}, "shape of X and Y"),
                                 dtype_param("dtype", "f32", "element type of X and Y")};
  params.insert(params.end(), extra.begin(), extra.end());
  auto build = [name, fn, check](const OpArgs& args) {
    if (check) check(args);
    std::vector<int64_t> shape = args.get_shape("shape");
    DataType dtype = args.get_dtype("dtype");
    DataType math = opmath_type(dtype);
    FunctionBuilder fb(name);
    Tensor x = fb.input("X", dtype, shape);
    Tensor y = fb.compute(name, shape, [&](const IndexVars& i) {
      return ir::cast(dtype, fn(ir::cast(math, x(to_exprs(i))), args));
    });
    return fb.build({y});
  };
  return OpKind{std::move(name), "activation", std::move(summary), std::move(params), std::move(build)};
}

Expr sigmoid(Expr x) { return 1.0 / (1.0 + ir::exp(-x)); }

// torch's SELU constants (Klambauer et al. 2017).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

void register_elementwise(OpRegistry& registry) {
  registry.add(elementwise_op("relu", "Y = max(X, 0) (KernelBench 19)", {},
                              [](Expr x, const OpArgs&) { return ir::max(x, 0.0); }));
  registry.add(elementwise_op(
      "leaky_relu", "Y = X if X > 0 else negative_slope * X (KernelBench 20)",
      {float_param("negative_slope", 0.01, "slope for X <= 0")}, [](Expr x, const OpArgs& args) {
        return ir::select(x > 0.0, x, x * args.get_float("negative_slope"));
      }));
  registry.add(elementwise_op("sigmoid", "Y = 1 / (1 + exp(-X)) (KernelBench 21)", {},
                              [](Expr x, const OpArgs&) { return sigmoid(x); }));
  registry.add(elementwise_op("tanh", "Y = tanh(X) (KernelBench 22)", {},
                              [](Expr x, const OpArgs&) { return ir::tanh(x); }));
  // KernelBench 25 writes x * torch.sigmoid(x): the sigmoid is rounded before the product.
  registry.add(elementwise_op("swish", "Y = X * sigmoid(X), also called SiLU (KernelBench 25)", {},
                              [](Expr x, const OpArgs&) { return x * sigmoid(x); }));
  registry.add(elementwise_op(
      "gelu", "Y = X * Phi(X), exact (erf) or with torch's tanh approximation (KernelBench 26, 88)",
      {choice_param("approximate", "none", {"none", "tanh"},
                    "none: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))")},
      [](Expr x, const OpArgs& args) {
        if (args.get_choice("approximate") == "none") return x * 0.5 * (1.0 + ir::erf(x * (std::numbers::sqrt2 / 2)));
        // The cube as two products, as torch.pow(x, 3.0) computes it.
        Expr inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * (x * x * x));
        return 0.5 * x * (1.0 + ir::tanh(inner));
      }));
  // expm1 rather than exp - 1 keeps the small negative inputs accurate, like torch's ELU kernel.
  registry.add(elementwise_op(
      "selu", "Y = scale * (X if X > 0 else alpha * (exp(X) - 1)) with torch's constants (KernelBench 27)", {},
      [](Expr x, const OpArgs&) {
        return ir::select(x > 0.0, x * kSeluScale, ir::expm1(x) * (kSeluAlpha * kSeluScale));
      }));
  // torch computes relu6(x + 3) / 6, equal to clamp(x / 6 + 1/2, 0, 1) up to rounding.
  registry.add(elementwise_op("hardsigmoid", "Y = min(max(X + 3, 0), 6) / 6 (KernelBench 28)", {},
                              [](Expr x, const OpArgs&) { return hardsigmoid_of(x); }));
  registry.add(elementwise_op("hardswish", "Y = X * min(max(X + 3, 0), 6) / 6 (MobileNetV3)", {},
                              [](Expr x, const OpArgs&) { return hardswish_of(x); }));
  registry.add(elementwise_op(
      "softplus", "Y = log(1 + exp(beta X)) / beta, or X where beta X > threshold (KernelBench 29)",
      {float_param("beta", 1.0, "sharpness; must not be 0"),
       float_param("threshold", 20.0, "above this value of beta * X the result is X itself")},
      [](Expr x, const OpArgs& args) {
        Expr scaled = x * args.get_float("beta");
        return ir::select(scaled > args.get_float("threshold"), x,
                          ir::log1p(ir::exp(scaled)) / args.get_float("beta"));
      },
      [](const OpArgs& args) { args.require(args.get_float("beta") != 0.0, "beta", "must not be 0"); }));
  registry.add(elementwise_op("softsign", "Y = X / (1 + |X|) (KernelBench 30)", {},
                              [](Expr x, const OpArgs&) { return x / (1.0 + ir::abs(x)); }));
  registry.add(elementwise_op(
      "elu", "Y = X if X > 0 else alpha * (exp(X) - 1) (KernelBench 31)",
      {float_param("alpha", 1.0, "scale of the negative part")},
      [](Expr x, const OpArgs& args) { return ir::select(x > 0.0, x, ir::expm1(x) * args.get_float("alpha")); }));
  registry.add(elementwise_op(
      "hardtanh", "Y = min(max(X, min_val), max_val) (KernelBench 32)",
      {float_param("min_val", -1.0, "lower bound"), float_param("max_val", 1.0, "upper bound")},
      [](Expr x, const OpArgs& args) {
        return ir::min(ir::max(x, args.get_float("min_val")), args.get_float("max_val"));
      },
      [](const OpArgs& args) {
        args.require(args.get_float("min_val") <= args.get_float("max_val"), "min_val",
                     fmt::format("{} is greater than max_val {}", args.get_float("min_val"),
                                 args.get_float("max_val")));
      }));
}

// softmax and log_softmax: the maximum along the axis is subtracted before exp so that exp
// never overflows (torch does the same); the statistics are kept in the compute type.
ir::PrimFunc build_softmax(const OpArgs& args, bool log) {
  std::vector<int64_t> shape = args.get_shape("shape");
  DataType dtype = args.get_dtype("dtype");
  DataType math = opmath_type(dtype);
  int axis = resolve_axis(args, static_cast<int>(shape.size()));
  std::vector<int64_t> outer = shape;
  outer.erase(outer.begin() + axis);
  int64_t length = shape[axis];

  FunctionBuilder fb(log ? "log_softmax" : "softmax");
  Tensor x = fb.input("X", dtype, shape);
  // The element of x at outer index `i` and position `k` along the axis, in the compute type.
  auto x_at = [&](const IndexVars& i, Expr k) { return ir::cast(math, x(with_axis(i, axis, std::move(k)))); };
  // The outer index of a full index (the axis coordinate dropped).
  auto outer_of = [&](const IndexVars& i) {
    std::vector<Expr> o = to_exprs(i);
    o.erase(o.begin() + axis);
    return o;
  };

  Tensor x_max = fb.reduce("x_max", outer, {length}, math, Reducer::maximum(),
                           [&](const IndexVars& i, const IndexVars& r) { return x_at(i, r[0]); });
  Tensor y;
  if (log) {
    // y = x - max - log(sum exp(x - max)): no normalised exp is ever stored.
    Tensor exp_sum = fb.reduce("exp_sum", outer, {length}, math, Reducer::sum(),
                               [&](const IndexVars& i, const IndexVars& r) {
                                 return ir::exp(x_at(i, r[0]) - x_max(to_exprs(i)));
                               });
    y = fb.compute("log_softmax", shape, [&](const IndexVars& i) {
      std::vector<Expr> o = outer_of(i);
      Expr value = ir::cast(math, x(to_exprs(i))) - x_max(o) - ir::log(exp_sum(o));
      return ir::cast(dtype, value);
    });
  } else {
    Tensor x_exp = fb.compute("x_exp", shape, [&](const IndexVars& i) {
      return ir::exp(ir::cast(math, x(to_exprs(i))) - x_max(outer_of(i)));
    });
    Tensor exp_sum = fb.reduce("exp_sum", outer, {length}, math, Reducer::sum(),
                               [&](const IndexVars& i, const IndexVars& r) { return x_exp(with_axis(i, axis, r[0])); });
    y = fb.compute("softmax", shape, [&](const IndexVars& i) {
      return ir::cast(dtype, x_exp(to_exprs(i)) / exp_sum(outer_of(i)));
    });
  }
  return fb.build({y});
}

void register_softmax(OpRegistry& registry) {
  for (bool log : {false, true}) {
    std::string name = log ? "log_softmax" : "softmax";
    std::string summary = log ? "Y = X - max - log(sum exp(X - max)) along one axis (KernelBench 24)"
                              : "Y = exp(X - max) / sum exp(X - max) along one axis (KernelBench 23)";
    registry.add(OpKind{
        name,
        "activation",
        summary,
        {shape_param("shape", std::vector<int64_t>{16, 1024}, "shape of X and Y"),
         axis_param("axis normalised over; negative counts from the end"),
         dtype_param("dtype", "f32", "element type of X and Y; statistics are f32 for f16 and bf16")},
        [log](const OpArgs& args) { return build_softmax(args, log); },
    });
  }
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  register_elementwise(registry);
  register_softmax(registry);
}

}  // namespace dragon::ops
