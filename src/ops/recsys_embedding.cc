// Embedding pooling: torch.nn.EmbeddingBag with offsets, FBGEMM's table-batched embedding
// (TBE) forward, and int8-rowwise dequantize-and-pool. Forward only; no optimizer.
#include <algorithm>

#include <fmt/format.h>

#include "recsys.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

using recsys::bag_length;

// Every pooling loop below runs over a static max_bag_length with a select on the real
// bag length, never over all indices: work is linear in bags * max_len * D, and the
// select is lazy, so positions past the bag load nothing.

// torch.nn.EmbeddingBag(mode, include_last_offset=True): B+1 offsets, empty bags give 0
// in every mode (max too), per_sample_weights only with sum.
ir::PrimFunc build_embedding_bag(const OpArgs& args) {
  int64_t rows = args.get_int("num_embeddings"), dim = args.get_int("embedding_dim");
  int64_t batch = args.get_int("batch"), max_len = args.get_int("max_bag_length");
  int64_t total = args.get_int("num_indices");
  const std::string& mode = args.get_choice("mode");
  bool weighted = args.get_bool("per_sample_weights");
  DataType dtype = args.get_dtype("dtype"), index = args.get_dtype("index_dtype");
  DataType acc = opmath_type(dtype);
  args.require(
      total <= batch * max_len, "num_indices",
      fmt::format("{} indices do not fit in {} bags of at most {} (batch * max_bag_length)", total, batch, max_len));
  args.require(!weighted || mode == "sum", "per_sample_weights",
               fmt::format("torch accepts per_sample_weights only with mode=sum, not mode={}", mode));

  FunctionBuilder fb("embedding_bag");
  Tensor weight = fb.input("weight", dtype, {rows, dim});
  Tensor indices = fb.input("indices", index, {total}, ir::ValueDomain::int_range(0, rows));
  Tensor offsets = fb.input("offsets", index, {batch + 1}, ir::ValueDomain::offsets(total, max_len));
  Tensor sample_weights;
  if (weighted) sample_weights = fb.input("per_sample_weights", dtype, {total});

  Tensor length = fb.compute("bag_length", {batch}, [&](const IndexVars& i) { return bag_length(offsets, i[0]); });
  bool is_max = mode == "max";
  Tensor pooled =
      fb.reduce("pooled", {batch, dim}, {max_len}, acc, is_max ? Reducer::maximum() : Reducer::sum(),
                [&](const IndexVars& i, const IndexVars& r) {
                  Expr k = ir::cast(index, r[0]);
                  Expr at = offsets(i[0]) + k;
                  Expr value = ir::cast(acc, weight(indices(at), i[1]));
                  if (weighted) value = value * ir::cast(acc, sample_weights(at));
                  return ir::select(k < length(i[0]), value, is_max ? ir::min_value(acc) : ir::make_zero(acc));
                });
  if (mode == "sum" && acc == dtype) return fb.build({pooled});
  Tensor out = fb.compute("out", {batch, dim}, [&](const IndexVars& i) {
    Expr n = length(i[0]);
    Expr value = pooled(i[0], i[1]);
    if (mode == "mean") value = value / ir::cast(acc, ir::max(n, ir::make_one(index)));
    if (is_max) value = ir::select(n > 0, value, ir::make_zero(acc));
    return ir::cast(dtype, value);
  });
  return fb.build({out});
}

// Cumulative row counts of `rows`: where each table starts in the concatenated weights.
std::vector<int64_t> table_starts(const std::vector<int64_t>& rows) {
  std::vector<int64_t> starts(rows.size(), 0);
  for (size_t t = 1; t < rows.size(); ++t) starts[t] = starts[t - 1] + rows[t - 1];
  return starts;
}

// The constant starts[t] as an i64 expression of the table variable t: a select chain,
// folded once per table by the stage that materializes it.
Expr constant_table(const std::vector<int64_t>& starts, const Expr& t) {
  Expr value = ir::make_const(DataType::i64(), static_cast<double>(starts.back()));
  for (size_t k = starts.size() - 1; k-- > 0;) {
    value = ir::select(ir::eq(t, static_cast<int64_t>(k)),
                       ir::make_const(DataType::i64(), static_cast<double>(starts[k])), value);
  }
  return value;
}

// FBGEMM SplitTableBatchedEmbeddingBagsCodegen forward: T tables (rows[t] rows each, one D)
// concatenated in one weight buffer; indices are rows within their own table, and bag
// (t, b) is offsets[t * B + b] .. offsets[t * B + b + 1]; out[b, t * D + d].
// With i8 weights it is the int8-rowwise inference kernel: each row holds D uint8 codes
// (stored as i8 bit patterns) and a row's value is scale * code + bias. FBGEMM fuses the
// f32 scale and bias into the row's last 8 bytes; the IR has no bit casts, so they come
// as a separate [rows, 2] f32 input instead.
ir::PrimFunc build_table_batched_embedding(const OpArgs& args) {
  const std::vector<int64_t>& rows = args.get_shape("rows");
  int64_t tables = static_cast<int64_t>(rows.size());
  int64_t dim = args.get_int("embedding_dim"), batch = args.get_int("batch");
  int64_t max_len = args.get_int("max_bag_length"), total = args.get_int("num_indices");
  const std::string& pooling = args.get_choice("pooling");
  bool weighted = args.get_bool("per_sample_weights");
  DataType weights_dtype = args.get_dtype("weights_dtype"), output_dtype = args.get_dtype("output_dtype");
  DataType index = args.get_dtype("index_dtype");
  DataType acc = DataType::f32();
  args.require(
      total <= tables * batch * max_len, "num_indices",
      fmt::format("{} indices do not fit in {} tables * {} bags of at most {}", total, tables, batch, max_len));
  args.require(!weighted || pooling == "sum", "per_sample_weights",
               fmt::format("per-sample weights are supported with pooling=sum only, not pooling={}", pooling));
  std::vector<int64_t> starts = table_starts(rows);
  int64_t all_rows = starts.back() + rows.back();
  int64_t fewest_rows = *std::min_element(rows.begin(), rows.end());

  FunctionBuilder fb("table_batched_embedding");
  bool quantized = weights_dtype == DataType::i8();
  // Every byte pattern is a valid code.
  Tensor weights = fb.input("weights", weights_dtype, {all_rows, dim},
                            quantized ? ir::ValueDomain::int_range(-128, 128) : ir::ValueDomain::real());
  // One value domain covers the whole flat index list, so generated indices stay below
  // the smallest table; the kernel itself takes any row of each table.
  Tensor indices = fb.input("indices", index, {total}, ir::ValueDomain::int_range(0, fewest_rows));
  Tensor offsets = fb.input("offsets", index, {tables * batch + 1}, ir::ValueDomain::offsets(total, max_len));
  Tensor scale_bias;
  if (quantized) scale_bias = fb.input("scale_bias", DataType::f32(), {all_rows, 2});
  Tensor sample_weights;
  if (weighted) sample_weights = fb.input("per_sample_weights", DataType::f32(), {total});
  // Row `row`, column d as f32; i8 codes are read as unsigned bytes (0..255).
  auto row_value = [&](const Expr& row, const Expr& d) {
    if (!quantized) return ir::cast(acc, weights(row, d));
    Expr code = ir::cast(acc, ir::floormod(ir::cast(DataType::i32(), weights(row, d)), 256));
    return scale_bias(row, 0) * code + scale_bias(row, 1);
  };

  Tensor table_start =
      fb.compute("table_row_start", {tables}, [&](const IndexVars& i) { return constant_table(starts, i[0]); });
  Tensor length = fb.compute("bag_length", {tables, batch},
                             [&](const IndexVars& i) { return bag_length(offsets, i[0] * batch + i[1]); });
  Tensor pooled = fb.reduce("pooled", {batch, tables, dim}, {max_len}, acc, Reducer::sum(),
                            [&](const IndexVars& i, const IndexVars& r) {
                              Expr b = i[0], t = i[1], d = i[2];
                              Expr k = ir::cast(index, r[0]);
                              Expr at = offsets(t * batch + b) + k;
                              Expr row = table_start(t) + ir::cast(DataType::i64(), indices(at));
                              Expr value = row_value(row, d);
                              if (weighted) value = value * sample_weights(at);
                              return ir::select(k < length(t, b), value, ir::make_zero(acc));
                            });
  Tensor out = fb.compute("out", {batch, tables * dim}, [&](const IndexVars& i) {
    Expr t = ir::floordiv(i[1], dim), d = ir::floormod(i[1], dim);
    Expr value = pooled(i[0], t, d);
    if (pooling == "mean") value = value / ir::cast(acc, ir::max(length(t, i[0]), ir::make_one(index)));
    return ir::cast(output_dtype, value);
  });
  return fb.build({out});
}

}  // namespace

void register_embedding_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "embedding_bag",
      "recsys",
      "torch.nn.EmbeddingBag sum/mean/max over B+1 offsets (include_last_offset), optional per-sample "
      "weights; empty bags give 0 (DLRM-Bench R1, R2)",
      {int_param("num_embeddings", 64, "rows of the table (E)"), int_param("embedding_dim", 16, "columns (D)"),
       int_param("batch", 8, "bags (B); offsets has B+1 entries"),
       int_param("max_bag_length", 8, "longest bag; bounds the pooling loop"),
       int_param("num_indices", 32, "total indices over all bags (at most batch * max_bag_length)"),
       choice_param("mode", "sum", {"sum", "mean", "max"}, "pooling"),
       bool_param("per_sample_weights", false, "multiply each row by a weight (mode=sum only)"),
       dtype_param("dtype", "f32", "weight and output type; 16-bit types accumulate in f32"),
       recsys::index_dtype_param()},
      build_embedding_bag,
  });
  registry.add(OpKind{
      "table_batched_embedding",
      "recsys",
      "FBGEMM TBE forward: T tables in one weight buffer, flat indices, T*B+1 offsets, output [B, T*D]; "
      "f32/f16/bf16 or int8-rowwise weights (DLRM-Bench R3, R4, R5)",
      {shape_param("rows", std::vector<int64_t>{20, 7, 13}, "rows of each table, e.g. 20x7x13 (T tables)"),
       int_param("embedding_dim", 8, "columns of every table (D)"), int_param("batch", 4, "bags per table (B)"),
       int_param("max_bag_length", 4, "longest bag; bounds the pooling loop"),
       int_param("num_indices", 24, "total indices over all tables and bags"),
       choice_param("pooling", "sum", {"sum", "mean"}, "pooling of each bag"),
       bool_param("per_sample_weights", false, "f32 weight per index (pooling=sum only)"),
       dtype_param("weights_dtype", "f32", "type of the embedding rows; i8: uint8 codes with an f32 scale_bias input",
                   {"f32", "f16", "bf16", "i8"}),
       dtype_param("output_dtype", "f32", "type of the pooled output (accumulation is f32)", {"f32", "f16", "bf16"}),
       recsys::index_dtype_param()},
      build_table_batched_embedding,
  });
}

}  // namespace dragon::ops
