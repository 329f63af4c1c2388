// Jagged tensors (values plus offsets, as FBGEMM and torchrec store them): padding to
// dense, the inverse scatter, lengths -> offsets as a real scan, and target-attention
// pooling over jagged histories. Not KJT permutes.
#include <fmt/format.h>

#include "recsys.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

using recsys::bag_length;

// fbgemm jagged_to_padded_dense (jagged_2d_to_dense with a padding value): bag b's
// rows land at out[b, 0:len], the rest of the max_len slots hold padding_value.
ir::PrimFunc build_jagged_to_dense(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), max_len = args.get_int("max_len"), dim = args.get_int("embedding_dim");
  int64_t total = args.get_int("total");
  double padding = args.get_float("padding_value");
  DataType dtype = args.get_dtype("dtype"), index = args.get_dtype("index_dtype");
  args.require(total <= batch * max_len, "total",
               fmt::format("{} rows do not fit in {} bags of at most {} (batch * max_len)", total, batch, max_len));

  FunctionBuilder fb("jagged_to_dense");
  Tensor values = fb.input("values", dtype, {total, dim});
  Tensor offsets = fb.input("offsets", index, {batch + 1}, ir::ValueDomain::offsets(total, max_len));
  Tensor out = fb.compute("out", {batch, max_len, dim}, [&](const IndexVars& i) {
    Expr at = offsets(i[0]) + ir::cast(index, i[1]);
    return ir::select(at < offsets(i[0] + 1), values(at, i[2]), ir::make_const(dtype, padding));
  });
  return fb.build({out});
}

// fbgemm dense_to_jagged: values[offsets[b] + l, d] = dense[b, l, d] for l < len(b).
// Written as a scatter from the dense side: each (b, l, d) writes at most one distinct
// row, so the block is spatial and the work is B * max_len * D. A gather from the values
// side would first need each row's bag, which takes a search over the offsets per row.
ir::PrimFunc build_dense_to_jagged(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), max_len = args.get_int("max_len"), dim = args.get_int("embedding_dim");
  int64_t total = args.get_int("total");
  DataType dtype = args.get_dtype("dtype"), index = args.get_dtype("index_dtype");
  args.require(total <= batch * max_len, "total",
               fmt::format("{} rows do not fit in {} bags of at most {} (batch * max_len)", total, batch, max_len));

  FunctionBuilder fb("dense_to_jagged");
  Tensor dense = fb.input("dense", dtype, {batch, max_len, dim});
  Tensor offsets = fb.input("offsets", index, {batch + 1}, ir::ValueDomain::offsets(total, max_len));
  Tensor values = fb.declare("values", dtype, {total, dim});
  fb.custom("values_scatter", {batch, max_len, dim}, std::vector<ir::IterKind>(3, ir::IterKind::kSpatial),
            [&](const IndexVars& i) {
              Expr at = offsets(i[0]) + ir::cast(index, i[1]);
              ir::Stmt store = ir::BufferStoreNode::make(values.buffer(), dense(i[0], i[1], i[2]), {at, i[2]});
              return ir::IfThenElseNode::make(at < offsets(i[0] + 1), store);
            });
  return fb.build({values});
}

// fbgemm asynchronous_complete_cumsum (B+1 entries: 0, l0, l0+l1, ..., the total) or,
// without the total, asynchronous_exclusive_cumsum (the first B of them). An ordered
// scan: out[0] = 0, out[i] = out[i-1] + lengths[i-1].
ir::PrimFunc build_lengths_to_offsets(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), max_len = args.get_int("max_len");
  bool with_total = args.get_bool("include_total");
  DataType index = args.get_dtype("index_dtype");

  FunctionBuilder fb("lengths_to_offsets");
  Tensor lengths = fb.input("lengths", index, {batch}, ir::ValueDomain::int_range(0, max_len + 1));
  Tensor offsets = fb.scan(
      "offsets", {with_total ? batch + 1 : batch}, 0, false, [&](const IndexVars&) { return ir::make_zero(index); },
      [&](const IndexVars& i, Expr previous) { return previous + lengths(i[0] - 1); });
  return fb.build({offsets});
}

// DIN-style target attention over a jagged history: for bag b with rows h_l,
// s_l = <h_l, q_b>, p = softmax(s) over the bag's rows only, out[b] = sum_l p_l h_l.
// An empty bag gives 0. The softmax subtracts the bag's max, like torch.softmax.
ir::PrimFunc build_jagged_attention_pooling(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), max_len = args.get_int("max_len"), dim = args.get_int("embedding_dim");
  int64_t total = args.get_int("total");
  DataType dtype = args.get_dtype("dtype"), index = args.get_dtype("index_dtype");
  DataType acc = opmath_type(dtype);
  args.require(total <= batch * max_len, "total",
               fmt::format("{} rows do not fit in {} bags of at most {} (batch * max_len)", total, batch, max_len));

  FunctionBuilder fb("jagged_attention_pooling");
  Tensor history = fb.input("history", dtype, {total, dim});
  Tensor query = fb.input("query", dtype, {batch, dim});
  Tensor offsets = fb.input("offsets", index, {batch + 1}, ir::ValueDomain::offsets(total, max_len));

  Tensor length = fb.compute("bag_length", {batch}, [&](const IndexVars& i) { return bag_length(offsets, i[0]); });
  auto inside = [&](const Expr& b, const Expr& l) { return ir::cast(index, l) < length(b); };
  auto row = [&](const Expr& b, const Expr& l) { return offsets(b) + ir::cast(index, l); };
  Tensor scores =
      fb.reduce("scores", {batch, max_len}, {dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        Expr dot = ir::cast(acc, history(row(i[0], i[1]), r[0])) * ir::cast(acc, query(i[0], r[0]));
        return ir::select(inside(i[0], i[1]), dot, ir::make_zero(acc));
      });
  Tensor row_max =
      fb.reduce("score_max", {batch}, {max_len}, acc, Reducer::maximum(), [&](const IndexVars& i, const IndexVars& r) {
        return ir::select(inside(i[0], r[0]), scores(i[0], r[0]), ir::min_value(acc));
      });
  Tensor weights = fb.compute("exp_scores", {batch, max_len}, [&](const IndexVars& i) {
    return ir::select(inside(i[0], i[1]), ir::exp(scores(i[0], i[1]) - row_max(i[0])), ir::make_zero(acc));
  });
  Tensor denom = fb.reduce("exp_sum", {batch}, {max_len}, acc, Reducer::sum(),
                           [&](const IndexVars& i, const IndexVars& r) { return weights(i[0], r[0]); });
  Tensor pooled = fb.reduce("weighted_sum", {batch, dim}, {max_len}, acc, Reducer::sum(),
                            [&](const IndexVars& i, const IndexVars& r) {
                              Expr h = ir::cast(acc, history(row(i[0], r[0]), i[1]));
                              return ir::select(inside(i[0], r[0]), weights(i[0], r[0]) * h, ir::make_zero(acc));
                            });
  Tensor out = fb.compute("out", {batch, dim}, [&](const IndexVars& i) {
    Expr value = ir::select(length(i[0]) > 0, pooled(i[0], i[1]) / denom(i[0]), ir::make_zero(acc));
    return ir::cast(dtype, value);
  });
  return fb.build({out});
}

}  // namespace

void register_jagged_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "jagged_to_dense",
      "recsys",
      "jagged values [total, D] with B+1 offsets -> padded [B, max_len, D] (fbgemm jagged_to_padded_dense; "
      "DLRM-Bench R10)",
      {int_param("batch", 8, "bags (B)"), int_param("max_len", 8, "padded length; the longest bag"),
       int_param("embedding_dim", 16, "row width (D)"), int_param("total", 32, "rows of values (sum of lengths)"),
       float_param("padding_value", 0.0, "value of the padding slots"),
       dtype_param("dtype", "f32", "element type of values and output"), recsys::index_dtype_param()},
      build_jagged_to_dense,
  });
  registry.add(OpKind{
      "dense_to_jagged",
      "recsys",
      "padded [B, max_len, D] with B+1 offsets -> jagged values [total, D] (fbgemm dense_to_jagged; "
      "DLRM-Bench R10)",
      {int_param("batch", 8, "bags (B)"), int_param("max_len", 8, "padded length; the longest bag"),
       int_param("embedding_dim", 16, "row width (D)"), int_param("total", 32, "rows of values (sum of lengths)"),
       dtype_param("dtype", "f32", "element type of dense and values"), recsys::index_dtype_param()},
      build_dense_to_jagged,
  });
  registry.add(OpKind{
      "lengths_to_offsets",
      "recsys",
      "exclusive cumsum of bag lengths as a scan: B+1 offsets (fbgemm asynchronous_complete_cumsum) or B "
      "(asynchronous_exclusive_cumsum) (DLRM-Bench R11)",
      {int_param("batch", 16, "lengths (B)"), int_param("max_len", 8, "largest length the inputs hold"),
       bool_param("include_total", true, "B+1 entries ending with the total, as complete_cumsum; else B"),
       recsys::index_dtype_param()},
      build_lengths_to_offsets,
  });
  registry.add(OpKind{
      "jagged_attention_pooling",
      "recsys",
      "DIN-style target attention: scores = history . query per bag, softmax within the bag, weighted sum of "
      "the history -> [B, D]; empty bags give 0 (DLRM-Bench R12)",
      {int_param("batch", 8, "bags (B)"), int_param("max_len", 8, "longest history"),
       int_param("embedding_dim", 16, "row width (D)"), int_param("total", 32, "rows of history (sum of lengths)"),
       dtype_param("dtype", "f32", "element type; 16-bit types compute scores and softmax in f32"),
       recsys::index_dtype_param()},
      build_jagged_attention_pooling,
  });
}

}  // namespace dragon::ops
