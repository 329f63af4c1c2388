// Eager (ATen) computations of the recsys op family; see eager_op_table.h.
//
// Everything is vectorized over bags: jagged data is addressed through the offsets
// with at::searchsorted (which bag a flat position belongs to) or by padding each bag to
// max_len with a mask, so nothing loops over bags on the host and nothing reads a device
// value back (no .item()).
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// Throws when the caller passed another number of inputs than the op's PrimFunc has.
void require_inputs(const EagerOpParams& params, const std::vector<at::Tensor>& inputs, size_t count) {
  if (inputs.size() != count) {
    throw std::runtime_error(params.op_kind() + ": expected " + std::to_string(count) + " inputs, got " +
                             std::to_string(inputs.size()));
  }
}

// What our builders accumulate `t` in: f32 for the 16-bit floats, else t itself (f32, or
// f64 when the caller promoted the inputs).
at::ScalarType accumulator_type(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t; }

// libtorch 1.13's CPU GEMMs (mm, addmm, bmm) reject f16. On CUDA they accumulate in f32
// and round once to f16; the f32 computation rounded at the end is what the CPU runs
// instead (tests only). CUDA and the other types run `op` on the inputs as they are.
std::vector<at::Tensor> with_cpu_f16_as_f32(const EagerOpParams& params, const std::vector<at::Tensor>& inputs,
                                            const EagerOp& op) {
  bool cpu_f16 = false;
  for (const at::Tensor& input : inputs) cpu_f16 |= input.scalar_type() == at::kHalf && !input.is_cuda();
  if (!cpu_f16) return op(params, inputs);
  std::vector<at::Tensor> widened;
  for (const at::Tensor& input : inputs) {
    widened.push_back(input.scalar_type() == at::kHalf ? input.to(at::kFloat) : input);
  }
  std::vector<at::Tensor> outputs = op(params, widened);
  for (at::Tensor& output : outputs) output = output.to(at::kHalf);
  return outputs;
}

// The bag of each flat position 0 .. count-1 under B+1 offsets: the last bag starting at
// or before it (right=true skips the empty bags that start there too). i64.
at::Tensor bag_of_position(const at::Tensor& offsets, int64_t count) {
  at::Tensor positions = at::arange(count, offsets.options());
  return at::searchsorted(offsets, positions, /*out_int32=*/false, /*right=*/true) - 1;
}

// Flat row of every padded slot (b, l): offsets[b] + l as [B, max_len] i64, and whether
// that slot lies inside bag b.
struct PaddedSlots {
  at::Tensor rows;
  at::Tensor inside;
};

PaddedSlots padded_slots(const at::Tensor& offsets, int64_t batch, int64_t max_len) {
  at::Tensor starts = offsets.narrow(0, 0, batch).to(at::kLong).unsqueeze(1);
  at::Tensor ends = offsets.narrow(0, 1, batch).to(at::kLong).unsqueeze(1);
  at::Tensor rows = starts + at::arange(max_len, offsets.options().dtype(at::kLong));
  return {rows, rows < ends};
}

// values [total, D] gathered into [B, max_len, D]; the slots past a bag's end hold some
// valid row (clamped), for the caller to mask. total >= 1 (the registry's minimum).
at::Tensor gather_padded(const at::Tensor& values, const PaddedSlots& slots) {
  int64_t total = values.size(0);
  at::Tensor rows = slots.rows.clamp_max(total - 1).flatten();
  return values.index_select(0, rows).view({slots.rows.size(0), slots.rows.size(1), values.size(1)});
}

int64_t embedding_bag_mode(const EagerOpParams& params, const std::string& mode) {
  if (mode == "sum") return 0;
  if (mode == "mean") return 1;
  if (mode == "max") return 2;
  throw std::runtime_error(params.op_kind() + ": unknown pooling mode '" + mode + "'");
}

// inputs: weight [E, D], indices [N], offsets [B+1], (per_sample_weights [N]); out [B, D].
std::vector<at::Tensor> embedding_bag(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  bool weighted = params.get_bool("per_sample_weights");
  require_inputs(params, inputs, weighted ? 4 : 3);
  int64_t mode = embedding_bag_mode(params, params.get_choice("mode"));
  at::Tensor weight = inputs[0];
  c10::optional<at::Tensor> sample_weights;
  if (weighted) sample_weights = inputs[3];
  at::ScalarType dtype = weight.scalar_type();
  // libtorch 1.13's CPU embedding_bag rejects bf16 weights (CUDA takes them and
  // accumulates in f32): on CPU, pool the f32 copy, which rounds the same way.
  if (dtype == at::kBFloat16 && !weight.is_cuda()) {
    weight = weight.to(at::kFloat);
    if (sample_weights) sample_weights = sample_weights->to(at::kFloat);
  }
  // include_last_offset=true: our B+1 offsets end with the total.
  at::Tensor pooled = std::get<0>(at::embedding_bag(weight, inputs[1], inputs[2], /*scale_grad_by_freq=*/false, mode,
                                                    /*sparse=*/false, sample_weights, /*include_last_offset=*/true));
  return {pooled.to(dtype)};
}

// FBGEMM's TBE forward without FBGEMM. inputs: weights [sum(rows), D] (f32/f16/bf16, or
// i8 holding uint8 codes), indices [N] (rows within their own table), offsets [T*B+1]
// (bag (t, b) is offsets[t*B + b] ..), (scale_bias [sum(rows), 2] f32 with i8 weights),
// (per_sample_weights [N] f32); out [B, T*D] in output_dtype.
std::vector<at::Tensor> table_batched_embedding(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  std::vector<int64_t> rows = params.get_shape("rows");
  auto tables = static_cast<int64_t>(rows.size());
  int64_t dim = params.get_int("embedding_dim"), batch = params.get_int("batch");
  bool mean = params.get_choice("pooling") == "mean";
  bool weighted = params.get_bool("per_sample_weights");
  bool quantized = params.get_dtype("weights_dtype") == ir::DataType::i8();
  require_inputs(params, inputs, 3 + (quantized ? 1 : 0) + (weighted ? 1 : 0));
  size_t next = 0;
  at::Tensor weights = inputs[next++], indices = inputs[next++], offsets = inputs[next++];
  at::Tensor scale_bias = quantized ? inputs[next++] : at::Tensor();
  c10::optional<at::Tensor> sample_weights;
  if (weighted) sample_weights = inputs[next++];

  // Indices are rows within their own table: add the table's first row in the shared
  // buffer, found from the bag each flat position belongs to (bag / B is its table).
  std::vector<int64_t> starts(rows.size(), 0);
  for (size_t t = 1; t < rows.size(); ++t) starts[t] = starts[t - 1] + rows[t - 1];
  // T values copied to the device once (host to device, no read-back).
  at::Tensor table_start = at::tensor(starts, at::kLong).to(indices.device());
  at::Tensor table = at::div(bag_of_position(offsets, indices.numel()), batch, "floor");
  at::Tensor global_rows = indices.to(at::kLong) + table_start.index_select(0, table);

  // FBGEMM accumulates in f32 and writes the output type once, so 16-bit and int8 rows
  // are widened before pooling, never pooled in their own type.
  at::ScalarType acc = quantized ? scale_bias.scalar_type() : accumulator_type(weights.scalar_type());
  at::Tensor pooled;  // [T*B, D], bags in (t, b) order
  if (!quantized && weights.scalar_type() == acc) {
    c10::optional<at::Tensor> per_sample;
    if (sample_weights) per_sample = sample_weights->to(acc);
    pooled = std::get<0>(at::embedding_bag(weights, global_rows, offsets.to(at::kLong), /*scale_grad_by_freq=*/false,
                                           /*mode=*/mean ? 1 : 0, /*sparse=*/false, per_sample,
                                           /*include_last_offset=*/true));
  } else {
    at::Tensor values;  // [N, D] in acc
    if (quantized) {
      // The i8 bytes are uint8 codes; row value = scale * code + bias.
      at::Tensor codes = weights.view(at::kByte).index_select(0, global_rows).to(acc);
      at::Tensor row_scale_bias = scale_bias.index_select(0, global_rows);
      values = codes * row_scale_bias.narrow(1, 0, 1) + row_scale_bias.narrow(1, 1, 1);
    } else {
      values = weights.index_select(0, global_rows).to(acc);
    }
    if (sample_weights) values = values * sample_weights->to(acc).unsqueeze(1);
    // unsafe=true skips segment_reduce's validation of the offsets, which reads values
    // back to the host; ours are valid B+1 offsets by construction. Empty bags give 0.
    pooled = at::segment_reduce(values, "sum", /*lengths=*/{}, /*indices=*/{}, offsets, /*axis=*/0, /*unsafe=*/true,
                                /*initial=*/at::Scalar(0.0));
    if (mean) {
      at::Tensor lengths = (offsets.narrow(0, 1, tables * batch) - offsets.narrow(0, 0, tables * batch)).clamp_min(1);
      pooled = pooled / lengths.to(acc).unsqueeze(1);
    }
  }
  at::Tensor out = pooled.view({tables, batch, dim}).permute({1, 0, 2}).reshape({batch, tables * dim});
  // With promoted (f64) inputs keep f64; the caller converts.
  return {acc == at::kFloat ? out.to(to_scalar_type(params.get_dtype("output_dtype"))) : out};
}

// inputs: dense [B, D], sparse [B, F, D]; out [B, D + pairs]: dense, then the dot
// products of the stacked features in torch.tril_indices order.
std::vector<at::Tensor> dlrm_dot_interaction(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 2);
  int64_t features = params.get_int("num_sparse") + 1;
  bool self = params.get_bool("self_interaction");
  const at::Tensor& dense = inputs[0];
  at::Tensor stacked = at::cat({dense.unsqueeze(1), inputs[1]}, 1);
  at::Tensor gram = at::bmm(stacked, stacked.transpose(1, 2));
  at::Tensor pairs = at::tril_indices(features, features, self ? 0 : -1, dense.options().dtype(at::kLong));
  at::Tensor dots = gram.flatten(1).index_select(1, pairs[0] * features + pairs[1]);
  return {at::cat({dense, dots}, 1)};
}

// inputs: x0 [B, n], x [B, n], v [n, r], u [r, n], bias [n]; out = x0 * (x @ v @ u + bias) + x,
// as torchrec's LowRankCrossNet layer runs it (two linears, the second with the bias).
std::vector<at::Tensor> dcn_cross_layer(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 5);
  const at::Tensor &x0 = inputs[0], &x = inputs[1], &v = inputs[2], &u = inputs[3], &bias = inputs[4];
  at::Tensor gate = at::addmm(bias, at::mm(x, v), u);
  return {at::addcmul(x, x0, gate)};
}

// inputs: values [total, D], offsets [B+1]; out [B, max_len, D], padding past each bag.
std::vector<at::Tensor> jagged_to_dense(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 2);
  int64_t batch = params.get_int("batch"), max_len = params.get_int("max_len");
  double padding = params.get_float("padding_value");
  const at::Tensor &values = inputs[0], &offsets = inputs[1];
  PaddedSlots slots = padded_slots(offsets, batch, max_len);
  return {gather_padded(values, slots).masked_fill(slots.inside.logical_not().unsqueeze(2), padding)};
}

// inputs: dense [B, max_len, D], offsets [B+1]; values[offsets[b] + l] = dense[b, l].
std::vector<at::Tensor> dense_to_jagged(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 2);
  int64_t max_len = params.get_int("max_len"), total = params.get_int("total");
  const at::Tensor &dense = inputs[0], &offsets = inputs[1];
  at::Tensor bag = bag_of_position(offsets, total);
  at::Tensor within = at::arange(total, bag.options()) - offsets.to(at::kLong).index_select(0, bag);
  return {dense.reshape({-1, dense.size(2)}).index_select(0, bag * max_len + within)};
}

// inputs: lengths [B]; out: 0, l0, l0+l1, ... (B+1 entries with the total, else B).
std::vector<at::Tensor> lengths_to_offsets(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 1);
  const at::Tensor& lengths = inputs[0];
  int64_t batch = lengths.size(0);
  at::Tensor complete =
      at::cat({at::zeros({1}, lengths.options()), at::cumsum(lengths, 0, lengths.scalar_type())});
  return {params.get_bool("include_total") ? complete : complete.narrow(0, 0, batch)};
}

// inputs: history [total, D], query [B, D], offsets [B+1]; out [B, D]: the bag's rows
// weighted by the softmax of their dot products with the query, 0 for an empty bag.
// Padded to [B, max_len, D] with a mask, as a PyTorch user without jagged kernels would.
std::vector<at::Tensor> jagged_attention_pooling(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  require_inputs(params, inputs, 3);
  int64_t batch = params.get_int("batch"), max_len = params.get_int("max_len");
  const at::Tensor &history = inputs[0], &query = inputs[1], &offsets = inputs[2];
  PaddedSlots slots = padded_slots(offsets, batch, max_len);
  at::Tensor outside = slots.inside.logical_not();
  at::Tensor padded = gather_padded(history, slots);
  at::Tensor scores = at::bmm(padded, query.unsqueeze(2)).squeeze(2);  // [B, max_len]
  scores = scores.masked_fill(outside, -std::numeric_limits<double>::infinity());
  // Softmax in f32 for the 16-bit types; an empty bag's all -inf row gives NaN, zeroed
  // with the padding so that its pooled row is 0.
  at::Tensor probabilities =
      at::softmax(scores, 1, accumulator_type(scores.scalar_type())).masked_fill(outside, 0.0);
  at::Tensor pooled = at::bmm(probabilities.to(history.scalar_type()).unsqueeze(1), padded).squeeze(1);
  return {pooled};
}

}  // namespace

void add_recsys_ops(EagerOpTable& table) {
  table.add("embedding_bag", "at::embedding_bag (include_last_offset)", embedding_bag);
  table.add("table_batched_embedding",
            "at::embedding_bag on table-offset indices; i8/f16/bf16 rows: at::index_select + dequantize + "
            "at::segment_reduce (TBE without FBGEMM)",
            table_batched_embedding);
  table.add("dlrm_dot_interaction", "at::bmm + tril_indices gather",
            [](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
              return with_cpu_f16_as_f32(params, inputs, dlrm_dot_interaction);
            });
  table.add("dcn_cross_layer", "at::mm + at::addmm + at::addcmul",
            [](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
              return with_cpu_f16_as_f32(params, inputs, dcn_cross_layer);
            });
  table.add("jagged_to_dense", "at::index_select + masked_fill (jagged_to_padded_dense without FBGEMM)",
            jagged_to_dense);
  table.add("dense_to_jagged", "at::searchsorted + at::index_select (dense_to_jagged without FBGEMM)",
            dense_to_jagged);
  table.add("lengths_to_offsets", "at::cumsum (complete/exclusive cumsum)", lengths_to_offsets);
  table.add("jagged_attention_pooling", "pad + at::bmm + masked at::softmax + at::bmm",
            [](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
              return with_cpu_f16_as_f32(params, inputs, jagged_attention_pooling);
            });
}

}  // namespace dragon::bench::torch_eager
