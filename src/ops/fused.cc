// Operator family "fused": common producer-consumer chains written as one function with
// one stage per step (matmul + bias + activation, residual add + LayerNorm or RMSNorm),
// so schedules can fuse them. Not a fusion pass.
#include <numbers>

#include <fmt/format.h>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "hard_activations.h"
#include "dragon/support/error.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// torch's activation of the same name on x (computed in x's type): gelu is the exact
// erf form, silu is x * sigmoid(x).
Expr activate(const std::string& act, const Expr& x) {
  if (act == "none") return x;
  if (act == "relu") return ir::max(x, 0.0);
  if (act == "gelu") return 0.5 * x * (1.0 + ir::erf(x * (1.0 / std::numbers::sqrt2)));
  Expr sigmoid = 1.0 / (1.0 + ir::exp(-x));
  if (act == "sigmoid") return sigmoid;
  if (act == "silu") return x * sigmoid;
  if (act == "hardsigmoid") return hardsigmoid_of(x);
  if (act == "hardswish") return hardswish_of(x);
  DRAGON_UNREACHABLE("activation {}", act);
}

// y = act(x @ w + bias) (with trans_w, torch.nn.Linear's x @ w^T + bias): the matmul
// reduction, then one epilogue stage for bias and activation, computed in the accumulator
// type and rounded once to dtype.
ir::PrimFunc build_matmul_bias_act(const OpArgs& args) {
  int64_t m = args.get_int("m"), n = args.get_int("n"), k = args.get_int("k");
  const std::string& act = args.get_choice("activation");
  bool trans_w = args.get_bool("trans_w");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("matmul_bias_act");
  Tensor x = fb.input("x", dtype, {m, k});
  Tensor w = fb.input("w", dtype, trans_w ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  Tensor bias = fb.input("bias", dtype, {n});
  Tensor product = fb.reduce("matmul", {m, n}, {k}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
    Expr weight = trans_w ? w(i[1], r[0]) : w(r[0], i[1]);
    return ir::cast(acc, x(i[0], r[0])) * ir::cast(acc, weight);
  });
  Tensor out = fb.compute("out", {m, n}, [&](const IndexVars& i) {
    return ir::cast(dtype, activate(act, product(i[0], i[1]) + ir::cast(acc, bias(i[1]))));
  });
  return fb.build({out});
}

// The residual sum h = x + residual, rounded to dtype (the value a fused add-norm kernel
// stores as the next residual), and its f32 view for the statistics.
struct ResidualSum {
  Tensor sum;
  DataType acc;
};

ResidualSum residual_sum(FunctionBuilder& fb, int64_t rows, int64_t dim, DataType dtype) {
  Tensor x = fb.input("x", dtype, {rows, dim});
  Tensor residual = fb.input("residual", dtype, {rows, dim});
  Tensor sum = fb.compute("sum", {rows, dim}, [&](const IndexVars& i) { return x(i[0], i[1]) + residual(i[0], i[1]); });
  return {sum, opmath_type(dtype)};
}

// LayerNorm(x + residual) over the last axis with weight and bias, biased variance,
// two passes (mean, then mean of squared deviations) like torch.
ir::PrimFunc build_add_layer_norm(const OpArgs& args) {
  int64_t rows = args.get_int("rows"), dim = args.get_int("dim");
  double eps = args.get_float("eps");
  bool return_sum = args.get_bool("return_sum");
  DataType dtype = args.get_dtype("dtype");
  args.require(eps >= 0, "eps", fmt::format("must be >= 0, got {}", eps));

  FunctionBuilder fb("add_layer_norm");
  // Plain variables, not a structured binding: lambdas below capture them (clang 14,
  // which builds the fuzzers, cannot capture bindings).
  ResidualSum residual = residual_sum(fb, rows, dim, dtype);
  Tensor h = residual.sum;
  DataType acc = residual.acc;
  Tensor weight = fb.input("weight", dtype, {dim});
  Tensor bias = fb.input("bias", dtype, {dim});
  Tensor total = fb.reduce("row_sum", {rows}, {dim}, acc, Reducer::sum(),
                           [&](const IndexVars& i, const IndexVars& r) { return h(i[0], r[0]); });
  Tensor mean = fb.compute("mean", {rows}, [&](const IndexVars& i) { return total(i[0]) / static_cast<double>(dim); });
  Tensor squares =
      fb.reduce("row_square_sum", {rows}, {dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        Expr centered = ir::cast(acc, h(i[0], r[0])) - mean(i[0]);
        return centered * centered;
      });
  Tensor inv_std = fb.compute(
      "inv_std", {rows}, [&](const IndexVars& i) { return ir::rsqrt(squares(i[0]) / static_cast<double>(dim) + eps); });
  Tensor out = fb.compute("out", {rows, dim}, [&](const IndexVars& i) {
    Expr normed = (ir::cast(acc, h(i[0], i[1])) - mean(i[0])) * inv_std(i[0]);
    return ir::cast(dtype, normed * ir::cast(acc, weight(i[1])) + ir::cast(acc, bias(i[1])));
  });
  if (return_sum) return fb.build({out, h});
  return fb.build({out});
}

// RMSNorm(x + residual) over the last axis with a weight, like torch.nn.RMSNorm:
// h * rsqrt(mean(h^2) + eps) * weight.
ir::PrimFunc build_add_rms_norm(const OpArgs& args) {
  int64_t rows = args.get_int("rows"), dim = args.get_int("dim");
  double eps = args.get_float("eps");
  bool return_sum = args.get_bool("return_sum");
  DataType dtype = args.get_dtype("dtype");
  args.require(eps >= 0, "eps", fmt::format("must be >= 0, got {}", eps));

  FunctionBuilder fb("add_rms_norm");
  // Plain variables, not a structured binding: lambdas below capture them (clang 14,
  // which builds the fuzzers, cannot capture bindings).
  ResidualSum residual = residual_sum(fb, rows, dim, dtype);
  Tensor h = residual.sum;
  DataType acc = residual.acc;
  Tensor weight = fb.input("weight", dtype, {dim});
  Tensor squares =
      fb.reduce("row_square_sum", {rows}, {dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        Expr v = ir::cast(acc, h(i[0], r[0]));
        return v * v;
      });
  Tensor inv_rms = fb.compute(
      "inv_rms", {rows}, [&](const IndexVars& i) { return ir::rsqrt(squares(i[0]) / static_cast<double>(dim) + eps); });
  Tensor out = fb.compute("out", {rows, dim}, [&](const IndexVars& i) {
    return ir::cast(dtype, ir::cast(acc, h(i[0], i[1])) * inv_rms(i[0]) * ir::cast(acc, weight(i[1])));
  });
  if (return_sum) return fb.build({out, h});
  return fb.build({out});
}

std::vector<OpParam> norm_params() {
  return {int_param("rows", 8, "rows normalized independently"), int_param("dim", 64, "normalized (last) axis"),
          float_param("eps", 1e-5, "added to the variance (mean square) before the square root"),
          bool_param("return_sum", false, "also output x + residual (the next residual stream)"),
          dtype_param("dtype", "f32", "element type; 16-bit types compute statistics in f32")};
}

}  // namespace

void register_fused_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "matmul_bias_act",
      "fused",
      "act(x[m,k] @ w[k,n] + bias[n]) with act none/relu/gelu(erf)/silu/sigmoid (DLRM-Bench R9 MLP layers)",
      {int_param("m", 64, "rows of x"), int_param("n", 64, "output features"), int_param("k", 64, "input features"),
       choice_param("activation", "relu", {"none", "relu", "gelu", "silu", "sigmoid", "hardsigmoid", "hardswish"}, "epilogue activation"),
       bool_param("trans_w", false, "w is stored n x k, as nn.Linear keeps its weight"),
       dtype_param("dtype", "f32", "element type; 16-bit types accumulate in f32")},
      build_matmul_bias_act,
  });
  registry.add(OpKind{"add_layer_norm", "fused",
                      "LayerNorm(x + residual) over the last axis with weight and bias (transformer add-norm)",
                      norm_params(), build_add_layer_norm});
  registry.add(OpKind{"add_rms_norm", "fused", "RMSNorm(x + residual) over the last axis with a weight", norm_params(),
                      build_add_rms_norm});
}

}  // namespace dragon::ops
