// Registration of each operator family; OpRegistry::global() calls them in this order.
#pragma once

#include "dragon/ops/op_registry.h"

namespace dragon::ops {

void register_matmul_ops(OpRegistry& registry);      // matmul.cc
void register_conv_ops(OpRegistry& registry);        // conv.cc
void register_pool_ops(OpRegistry& registry);        // pool.cc
void register_activation_ops(OpRegistry& registry);  // activation.cc
void register_norm_ops(OpRegistry& registry);        // norm.cc
void register_reduce_ops(OpRegistry& registry);      // reduce.cc
void register_scan_ops(OpRegistry& registry);        // scan.cc
void register_loss_ops(OpRegistry& registry);        // loss.cc
void register_attention_ops(OpRegistry& registry);   // attention.cc
void register_recsys_ops(OpRegistry& registry);      // recsys.cc
void register_fused_ops(OpRegistry& registry);       // fused.cc

}  // namespace dragon::ops
