// Feature interaction of recommender models: the DLRM dot interaction and the DCNv2 cross
// layer. The MLPs around them are matmul and matmul_bias_act (fused.cc).
#include "recsys.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// DLRM's "dot" interaction: T = [dense; sparse] is [B, F+1, D]; out[b] is dense[b]
// followed by <T[b, i], T[b, j]> for the pairs of torch.tril_indices(F+1, F+1, offset)
// in order, offset -1 (strict lower triangle) or 0 with self_interaction.
ir::PrimFunc build_dlrm_dot_interaction(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), features = args.get_int("num_sparse"), dim = args.get_int("embedding_dim");
  bool self = args.get_bool("self_interaction");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  int64_t rows = features + 1;
  int64_t pairs = self ? rows * (rows + 1) / 2 : rows * (rows - 1) / 2;

  FunctionBuilder fb("dlrm_dot_interaction");
  Tensor dense = fb.input("dense", dtype, {batch, dim});
  Tensor sparse = fb.input("sparse", dtype, {batch, features, dim});
  Tensor stacked = fb.compute("stacked", {batch, rows, dim}, [&](const IndexVars& i) {
    return ir::select(ir::eq(i[1], 0), dense(i[0], i[2]), sparse(i[0], i[1] - 1, i[2]));
  });

  // Pair p of the triangle lies in row i when first(i) <= p < first(i + 1), where
  // first(i) = i(i-1)/2 (or i(i+1)/2 with the diagonal). The row is the number of
  // i in [1, F] with first(i) <= p: exact integer arithmetic, no sqrt.
  auto first_pair = [&](const Expr& i) { return ir::floordiv(self ? i * (i + 1) : i * (i - 1), 2); };
  Tensor pair_row = fb.reduce(
      "pair_row", {pairs}, {features}, DataType::i32(), Reducer::sum(), [&](const IndexVars& p, const IndexVars& r) {
        return ir::select(first_pair(r[0] + 1) <= p[0], ir::make_one(DataType::i32()), ir::make_zero(DataType::i32()));
      });
  Tensor pair_col =
      fb.compute("pair_col", {pairs}, [&](const IndexVars& p) { return p[0] - first_pair(pair_row(p[0])); });

  Tensor dots =
      fb.reduce("dots", {batch, pairs}, {dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        Expr b = i[0], p = i[1];
        return ir::cast(acc, stacked(b, pair_row(p), r[0])) * ir::cast(acc, stacked(b, pair_col(p), r[0]));
      });
  Tensor out = fb.compute("out", {batch, dim + pairs}, [&](const IndexVars& i) {
    return ir::select(i[1] < dim, dense(i[0], i[1]), ir::cast(dtype, dots(i[0], i[1] - dim)));
  });
  return fb.build({out});
}

// One DCNv2 low-rank cross layer (torchrec LowRankCrossNet):
// x_next = x0 * (x @ v @ u + bias) + x, with v [n, r] and u [r, n] stored the way the
// matmuls read them (nn.Linear keeps their transposes). The rank-r product stays in the
// accumulator type between the two reductions, as a fused layer keeps it.
ir::PrimFunc build_dcn_cross_layer(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), dim = args.get_int("dim"), rank = args.get_int("rank");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("dcn_cross_layer");
  Tensor x0 = fb.input("x0", dtype, {batch, dim});
  Tensor x = fb.input("x", dtype, {batch, dim});
  Tensor v = fb.input("v", dtype, {dim, rank});
  Tensor u = fb.input("u", dtype, {rank, dim});
  Tensor bias = fb.input("bias", dtype, {dim});
  Tensor low =
      fb.reduce("low_rank", {batch, rank}, {dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        return ir::cast(acc, x(i[0], r[0])) * ir::cast(acc, v(r[0], i[1]));
      });
  Tensor high =
      fb.reduce("expand", {batch, dim}, {rank}, acc, Reducer::sum(),
                [&](const IndexVars& i, const IndexVars& r) { return low(i[0], r[0]) * ir::cast(acc, u(r[0], i[1])); });
  Tensor out = fb.compute("out", {batch, dim}, [&](const IndexVars& i) {
    Expr gate = high(i[0], i[1]) + ir::cast(acc, bias(i[1]));
    return ir::cast(dtype, ir::cast(acc, x0(i[0], i[1])) * gate + ir::cast(acc, x(i[0], i[1])));
  });
  return fb.build({out});
}

}  // namespace

void register_interaction_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "dlrm_dot_interaction",
      "recsys",
      "DLRM dot interaction: dense [B,D] and sparse [B,F,D] -> [B, D + (F+1)F/2], pairs in "
      "torch.tril_indices(offset=-1) order (DLRM-Bench R7)",
      {int_param("batch", 8, "rows (B)"), int_param("num_sparse", 4, "sparse features (F)"),
       int_param("embedding_dim", 16, "feature width (D)"),
       bool_param("self_interaction", false, "keep the diagonal too (tril offset 0): (F+1)(F+2)/2 pairs"),
       dtype_param("dtype", "f32", "input and output type; 16-bit types accumulate dot products in f32")},
      build_dlrm_dot_interaction,
  });
  registry.add(OpKind{
      "dcn_cross_layer",
      "recsys",
      "DCNv2 low-rank cross layer x0 * (x @ v @ u + bias) + x, v [n, r], u [r, n] (DLRM-Bench R8: one of 3)",
      {int_param("batch", 8, "rows (B)"), int_param("dim", 32, "feature width (n)"),
       int_param("rank", 8, "low rank (r)"),
       dtype_param("dtype", "f32", "element type; 16-bit types accumulate in f32")},
      build_dcn_cross_layer,
  });
}

}  // namespace dragon::ops
