// The eager computation of every op kind, in ATen calls: what a KernelBench reference (or
// the DLRM library call) runs for the same problem. Inputs and outputs follow our
// PrimFunc's parameters exactly (order, layout, dtype), so each entry adapts between our
// layouts and torch's where they differ and says so.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "eager_op_params.h"

namespace dragon::bench::torch_eager {

// `inputs`: the input parameters in parameter order, contiguous, in our dtypes (or all
// float ones promoted to f64). Returns the output parameters in parameter order, each with
// the element count of our buffer (the caller converts dtype and copies).
using EagerOp = std::function<std::vector<at::Tensor>(const EagerOpParams& params, const std::vector<at::Tensor>& inputs)>;

struct EagerOpEntry {
  std::string call;  // the main ATen call, for reports: "at::conv2d (cuDNN on CUDA)"
  EagerOp run;
};

class EagerOpTable {
 public:
  // Throws std::logic_error when `op_kind` is added twice.
  void add(std::string op_kind, std::string call, EagerOp run);
  const EagerOpEntry* find(std::string_view op_kind) const;
  const std::map<std::string, EagerOpEntry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, EagerOpEntry, std::less<>> entries_;
};

// Every family's entries, built once.
const EagerOpTable& eager_op_table();

// One registration function per op family (one file each).
void add_matmul_ops(EagerOpTable& table);      // matmul, batch_matmul, triangular_matmul, diag_matmul, mul_scalar
void add_conv_ops(EagerOpTable& table);        // conv1d/2d/3d, conv_transpose1d/2d/3d, depthwise_separable_conv2d
void add_pool_ops(EagerOpTable& table);        // max_pool1d/2d/3d, avg_pool1d/2d/3d
void add_activation_ops(EagerOpTable& table);  // relu ... log_softmax
void add_norm_ops(EagerOpTable& table);        // batch_norm ... frobenius_norm
void add_reduce_scan_ops(EagerOpTable& table); // sum, mean, max, argmax, argmin, min, cumsum, masked_cumsum, cumprod
void add_loss_ops(EagerOpTable& table);        // mse_loss ... cosine_similarity_loss
void add_attention_ops(EagerOpTable& table);   // scaled_dot_product_attention
void add_recsys_ops(EagerOpTable& table);      // embedding_bag ... jagged_attention_pooling
void add_fused_ops(EagerOpTable& table);       // matmul_bias_act, add_layer_norm, add_rms_norm

// Our dtype as torch's; throws std::runtime_error for a type torch lacks.
at::ScalarType to_scalar_type(ir::DataType dtype);

}  // namespace dragon::bench::torch_eager
