// Scaled dot-product attention as unfused stages: scores, row maximum, exponentials and
// their sum, normalisation, weighted sum of values (KernelBench level 1, 97). Not a fused
// flash-attention kernel: fusing is the schedule's job.
#include <cmath>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal) with
// Q [batch, heads, seq_q, head_dim], K and V [batch, heads, seq_kv, head_dim], scale
// 1/sqrt(head_dim), no dropout. The causal mask is torch's: query i sees keys j <= i
// (aligned at the top left when seq_q != seq_kv).
ir::PrimFunc build_scaled_dot_product_attention(const OpArgs& args) {
  int64_t batch = args.get_int("batch"), heads = args.get_int("heads");
  int64_t seq_q = args.get_int("seq_q"), seq_kv = args.get_int("seq_kv"), head_dim = args.get_int("head_dim");
  bool causal = args.get_bool("causal");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));

  FunctionBuilder fb("scaled_dot_product_attention");
  Tensor q = fb.input("Q", dtype, {batch, heads, seq_q, head_dim});
  Tensor k = fb.input("K", dtype, {batch, heads, seq_kv, head_dim});
  Tensor v = fb.input("V", dtype, {batch, heads, seq_kv, head_dim});
  std::vector<int64_t> rows = {batch, heads, seq_q};
  std::vector<int64_t> scores_shape = {batch, heads, seq_q, seq_kv};

  // scores[b, h, i, j] = Q[b, h, i, :] . K[b, h, j, :]
  Tensor scores =
      fb.reduce("scores", scores_shape, {head_dim}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
        return ir::cast(acc, q(i[0], i[1], i[2], r[0])) * ir::cast(acc, k(i[0], i[1], i[3], r[0]));
      });
  // Scaled, and -inf where the causal mask hides a key.
  Tensor logits = fb.compute("logits", scores_shape, [&](const IndexVars& i) {
    Expr scaled = scores(i[0], i[1], i[2], i[3]) * scale;
    if (!causal) return scaled;
    return ir::select(i[3] > i[2], ir::min_value(acc), scaled);
  });
  // Key 0 is never masked, so every row maximum is finite.
  Tensor row_max = fb.reduce("row_max", rows, {seq_kv}, acc, Reducer::maximum(),
                             [&](const IndexVars& i, const IndexVars& r) { return logits(i[0], i[1], i[2], r[0]); });
  Tensor exps = fb.compute("exp", scores_shape, [&](const IndexVars& i) {
    return ir::exp(logits(i[0], i[1], i[2], i[3]) - row_max(i[0], i[1], i[2]));
  });
  Tensor row_sum = fb.reduce("row_sum", rows, {seq_kv}, acc, Reducer::sum(),
                             [&](const IndexVars& i, const IndexVars& r) { return exps(i[0], i[1], i[2], r[0]); });
  Tensor weights = fb.compute("weights", scores_shape, [&](const IndexVars& i) {
    return exps(i[0], i[1], i[2], i[3]) / row_sum(i[0], i[1], i[2]);
  });
  // out[b, h, i, e] = sum_j weights[b, h, i, j] V[b, h, j, e]
  // The output keeps the name "out" whatever the type: "out_acc" when a cast follows.
  Tensor out = fb.reduce(acc == dtype ? "out" : "out_acc", {batch, heads, seq_q, head_dim}, {seq_kv}, acc,
                         Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
                           return weights(i[0], i[1], i[2], r[0]) * ir::cast(acc, v(i[0], i[1], r[0], i[3]));
                         });
  if (acc == dtype) return fb.build({out});
  Tensor rounded =
      fb.compute("out", out.shape(), [&](const IndexVars& i) { return ir::cast(dtype, out(i[0], i[1], i[2], i[3])); });
  return fb.build({rounded});
}

}  // namespace

void register_attention_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "scaled_dot_product_attention",
      "attention",
      "O = softmax(Q K^T / sqrt(head_dim) [+ causal mask]) V over [batch, heads, seq, head_dim], as "
      "torch.nn.functional.scaled_dot_product_attention (KernelBench 97)",
      {int_param("batch", 2, "batch size"), int_param("heads", 2, "attention heads"),
       int_param("seq_q", 64, "query positions"), int_param("seq_kv", 64, "key and value positions"),
       int_param("head_dim", 32, "length of each query, key and value vector"),
       bool_param("causal", false, "query i attends only to keys j <= i (torch's is_causal)"),
       dtype_param("dtype", "f32", "element type of Q, K, V and O (16-bit types accumulate in f32)")},
      build_scaled_dot_product_attention,
  });
}

}  // namespace dragon::ops
