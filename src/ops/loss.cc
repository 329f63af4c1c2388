// Loss functions reduced to one scalar (a 0-d output), as torch computes them with their
// default mean reductions (KernelBench level 1, 94-96 and 98-100). Per-row statistics are
// their own reduce stages; the final mean is its own stage.
#include <cmath>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<Expr> as_indices(const IndexVars& i) { return std::vector<Expr>(i.begin(), i.end()); }

// max(x, 0) that keeps NaN, like torch.clamp(x, min=0) (the IR's max drops a NaN operand).
Expr clamp_min_zero(Expr x) { return ir::select(x < 0.0, ir::make_zero(x.dtype()), x); }

// loss = total / count, rounded to the loss type: the mean reduction as its own stage.
Tensor mean_of(FunctionBuilder& fb, const Tensor& total, int64_t count, DataType dtype) {
  return fb.compute("loss", {},
                    [&](const IndexVars&) { return ir::cast(dtype, total() / static_cast<double>(count)); });
}

// mean((P - T)^2) over every element.
ir::PrimFunc build_mse_loss(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("mse_loss");
  Tensor p = fb.input("predictions", dtype, shape);
  Tensor t = fb.input("targets", dtype, shape);
  Tensor total =
      fb.reduce("squared_error_sum", {}, shape, acc, Reducer::sum(), [&](const IndexVars&, const IndexVars& r) {
        Expr d = ir::cast(acc, p(as_indices(r))) - ir::cast(acc, t(as_indices(r)));
        return d * d;
      });
  return fb.build({mean_of(fb, total, num_elements(shape), dtype)});
}

// torch.nn.functional.smooth_l1_loss: with z = |P - T|, 0.5 z^2 / beta below beta, else
// z - 0.5 beta; beta = 0 is the L1 loss (torch's special case, no division by zero).
ir::PrimFunc build_smooth_l1_loss(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  double beta = args.get_float("beta");
  args.require(beta >= 0, "beta", "must be >= 0 (torch rejects a negative beta)");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("smooth_l1_loss");
  Tensor p = fb.input("predictions", dtype, shape);
  Tensor t = fb.input("targets", dtype, shape);
  Tensor total = fb.reduce("smooth_l1_sum", {}, shape, acc, Reducer::sum(), [&](const IndexVars&, const IndexVars& r) {
    Expr z = ir::abs(ir::cast(acc, p(as_indices(r))) - ir::cast(acc, t(as_indices(r))));
    if (beta == 0) return z;
    return ir::select(z < beta, 0.5 * z * z / beta, z - 0.5 * beta);
  });
  return fb.build({mean_of(fb, total, num_elements(shape), dtype)});
}

// torch.nn.functional.cross_entropy(P, T) with class indices T: the mean over rows of
// logsumexp(P[b]) - P[b, T[b]], the log-sum-exp taken stably around the row maximum.
ir::PrimFunc build_cross_entropy_loss(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), classes = args.get_int("classes");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("cross_entropy_loss");
  Tensor p = fb.input("predictions", dtype, {batch, classes});
  Tensor t = fb.input("targets", DataType::i64(), {batch}, ir::ValueDomain::int_range(0, classes));
  Tensor row_max = fb.reduce("row_max", {batch}, {classes}, acc, Reducer::maximum(),
                             [&](const IndexVars& i, const IndexVars& r) { return p(i[0], r[0]); });
  Tensor row_sum = fb.reduce(
      "row_sum_exp", {batch}, {classes}, acc, Reducer::sum(),
      [&](const IndexVars& i, const IndexVars& r) { return ir::exp(ir::cast(acc, p(i[0], r[0])) - row_max(i[0])); });
  Tensor nll = fb.compute("nll", {batch}, [&](const IndexVars& i) {
    return ir::log(row_sum(i[0])) + row_max(i[0]) - ir::cast(acc, p(i[0], t(i[0])));
  });
  Tensor total = fb.reduce("nll_sum", {}, {batch}, acc, Reducer::sum(),
                           [&](const IndexVars&, const IndexVars& r) { return nll(r[0]); });
  return fb.build({mean_of(fb, total, batch, dtype)});
}

// torch.nn.functional.kl_div(torch.log(P), T, reduction='batchmean'): the sum of
// xlogy(T, T) - T * log(P) divided by the size of the first axis. P and T are
// probabilities along the last axis; log(P) is its own stage, as in the PyTorch program.
ir::PrimFunc build_kl_div_loss(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("kl_div_loss");
  Tensor p = fb.input("predictions", dtype, shape, ir::ValueDomain::simplex());
  Tensor t = fb.input("targets", dtype, shape, ir::ValueDomain::simplex());
  Tensor log_p = fb.compute("log_predictions", shape, [&](const IndexVars& i) { return ir::log(p(as_indices(i))); });
  Tensor total = fb.reduce("kl_sum", {}, shape, acc, Reducer::sum(), [&](const IndexVars&, const IndexVars& r) {
    Expr target = ir::cast(acc, t(as_indices(r)));
    // xlogy: a zero target contributes 0, not 0 * log(0).
    Expr xlogy = ir::select(ir::eq(target, ir::make_zero(acc)), ir::make_zero(acc), target * ir::log(target));
    return xlogy - target * ir::cast(acc, log_p(as_indices(r)));
  });
  return fb.build({mean_of(fb, total, shape[0], dtype)});
}

// torch.nn.TripletMarginLoss: d(x, y) = ||x - y + eps||_p per row (torch's
// pairwise_distance), loss = mean(max(margin + d(a, p) - d(a, n), 0)); with swap,
// d(a, n) becomes min(d(a, n), d(p, n)).
ir::PrimFunc build_triplet_margin_loss(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), features = args.get_int("features");
  double margin = args.get_float("margin"), p_norm = args.get_float("p"), eps = args.get_float("eps");
  bool swap = args.get_bool("swap");
  args.require(p_norm > 0, "p", "the norm degree must be > 0");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("triplet_margin_loss");
  Tensor anchor = fb.input("anchor", dtype, {batch, features});
  Tensor positive = fb.input("positive", dtype, {batch, features});
  Tensor negative = fb.input("negative", dtype, {batch, features});

  // sum_f |x - y + eps|^p per row; the root is taken in the row stage.
  auto power_sum = [&](const std::string& name, const Tensor& x, const Tensor& y) {
    return fb.reduce(name, {batch}, {features}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
      Expr d = ir::cast(acc, x(i[0], r[0])) - ir::cast(acc, y(i[0], r[0])) + eps;
      if (p_norm == 2) return d * d;
      if (p_norm == 1) return ir::abs(d);
      return ir::pow(ir::abs(d), ir::make_const(acc, p_norm));
    });
  };
  auto root = [&](Expr sum) {
    if (p_norm == 2) return ir::sqrt(sum);
    if (p_norm == 1) return sum;
    return ir::pow(sum, ir::make_const(acc, 1.0 / p_norm));
  };
  Tensor pos_sum = power_sum("dist_pos_pow", anchor, positive);
  Tensor neg_sum = power_sum("dist_neg_pow", anchor, negative);
  Tensor swap_sum = swap ? power_sum("dist_swap_pow", positive, negative) : Tensor();
  Tensor row_loss = fb.compute("row_loss", {batch}, [&](const IndexVars& i) {
    Expr dist_neg = root(neg_sum(i[0]));
    if (swap) dist_neg = ir::min(dist_neg, root(swap_sum(i[0])));
    return clamp_min_zero(margin + root(pos_sum(i[0])) - dist_neg);
  });
  Tensor total = fb.reduce("row_loss_sum", {}, {batch}, acc, Reducer::sum(),
                           [&](const IndexVars&, const IndexVars& r) { return row_loss(r[0]); });
  return fb.build({mean_of(fb, total, batch, dtype)});
}

// KernelBench 100: mean(clamp(1 - P * T, min=0)) with P [batch, features] and T
// [features] broadcast along the rows (torch aligns T with P's last axis). T holds
// labels +-1; ValueDomain has no two-value kind, so the closest is the integers
// {-1, 0, 1} (a 0 target only adds the constant term 1; the function is unchanged).
ir::PrimFunc build_hinge_loss(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), features = args.get_int("features");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("hinge_loss");
  Tensor p = fb.input("predictions", dtype, {batch, features});
  Tensor t = fb.input("targets", dtype, {features}, ir::ValueDomain::int_range(-1, 2));
  Tensor total =
      fb.reduce("hinge_sum", {}, {batch, features}, acc, Reducer::sum(), [&](const IndexVars&, const IndexVars& r) {
        return clamp_min_zero(1.0 - ir::cast(acc, p(r[0], r[1])) * ir::cast(acc, t(r[1])));
      });
  return fb.build({mean_of(fb, total, batch * features, dtype)});
}

// mean(1 - cosine_similarity(P, T, dim=1)) with torch's current definition:
// cos = P.T / (max(||P||, eps) * max(||T||, eps)), each norm clamped on its own.
ir::PrimFunc build_cosine_similarity_loss(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), features = args.get_int("features");
  double eps = args.get_float("eps");
  args.require(eps >= 0, "eps", "must be >= 0");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("cosine_similarity_loss");
  Tensor p = fb.input("predictions", dtype, {batch, features});
  Tensor t = fb.input("targets", dtype, {batch, features});
  auto row_sum = [&](const std::string& name, const Tensor& x, const Tensor& y) {
    return fb.reduce(name, {batch}, {features}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
      return ir::cast(acc, x(i[0], r[0])) * ir::cast(acc, y(i[0], r[0]));
    });
  };
  Tensor dot = row_sum("dot", p, t);
  Tensor p_square = row_sum("predictions_sq_norm", p, p);
  Tensor t_square = row_sum("targets_sq_norm", t, t);
  Tensor cosine = fb.compute("cosine", {batch}, [&](const IndexVars& i) {
    Expr p_norm = ir::max(ir::sqrt(p_square(i[0])), eps);
    Expr t_norm = ir::max(ir::sqrt(t_square(i[0])), eps);
    return dot(i[0]) / (p_norm * t_norm);
  });
  Tensor total = fb.reduce("distance_sum", {}, {batch}, acc, Reducer::sum(),
                           [&](const IndexVars&, const IndexVars& r) { return 1.0 - cosine(r[0]); });
  return fb.build({mean_of(fb, total, batch, dtype)});
}

OpParam loss_dtype() {
  return dtype_param("dtype", "f32", "element type of the inputs and the loss (16-bit types accumulate in f32)");
}

}  // namespace

void register_loss_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "mse_loss",
      "loss",
      "loss = mean((predictions - targets)^2), a scalar (KernelBench 94)",
      {shape_param("shape", std::vector<int64_t>{128, 1024}, "shape of predictions and targets"), loss_dtype()},
      build_mse_loss,
  });
  registry.add(OpKind{
      "smooth_l1_loss",
      "loss",
      "loss = torch.nn.functional.smooth_l1_loss(predictions, targets, beta), mean reduction (KernelBench 96)",
      {shape_param("shape", std::vector<int64_t>{128, 1024}, "shape of predictions and targets"),
       float_param("beta", 1.0, "threshold between the squared and the absolute branch (0: L1 loss)"), loss_dtype()},
      build_smooth_l1_loss,
  });
  registry.add(OpKind{
      "cross_entropy_loss",
      "loss",
      "loss = torch.nn.functional.cross_entropy(predictions[batch, classes], targets[batch] (i64 class ids)), "
      "mean reduction (KernelBench 95)",
      {int_param("batch", 64, "rows of predictions"), int_param("classes", 1000, "number of classes"), loss_dtype()},
      build_cross_entropy_loss,
  });
  registry.add(OpKind{
      "kl_div_loss",
      "loss",
      "loss = torch.nn.functional.kl_div(log(predictions), targets, reduction='batchmean') for probabilities "
      "along the last axis (KernelBench 98)",
      {shape_param("shape", std::vector<int64_t>{128, 1024},
                   "shape of predictions and targets; batchmean divides "
                   "by the first extent"),
       loss_dtype()},
      build_kl_div_loss,
  });
  registry.add(OpKind{
      "triplet_margin_loss",
      "loss",
      "loss = torch.nn.TripletMarginLoss(margin, p, eps, swap)(anchor, positive, negative) over [batch, features], "
      "mean reduction (KernelBench 99)",
      {int_param("batch", 128, "rows of each input"), int_param("features", 512, "length of each row"),
       float_param("margin", 1.0, "margin between the positive and the negative distance"),
       float_param("p", 2.0, "norm degree of the pairwise distance"),
       float_param("eps", 1e-6, "added to each difference, as torch's pairwise_distance does"),
       bool_param("swap", false, "use min(d(a, n), d(p, n)) as the negative distance"), loss_dtype()},
      build_triplet_margin_loss,
  });
  registry.add(OpKind{
      "hinge_loss",
      "loss",
      "loss = mean(clamp(1 - predictions[batch, features] * targets[features], min=0)), targets +-1 "
      "(KernelBench 100)",
      {int_param("batch", 128, "rows of predictions"),
       int_param("features", 512, "columns of predictions and length of targets"), loss_dtype()},
      build_hinge_loss,
  });
  registry.add(OpKind{
      "cosine_similarity_loss",
      "loss",
      "loss = mean(1 - cosine_similarity(predictions, targets, dim=1)) over [batch, features] (problem 97 of "
      "earlier KernelBench releases, since replaced by attention)",
      {int_param("batch", 128, "rows of each input"), int_param("features", 512, "length of each row"),
       float_param("eps", 1e-8, "lower bound of each norm"), loss_dtype()},
      build_cosine_similarity_loss,
  });
}

}  // namespace dragon::ops
