#include "eager_op_table.h"

#include <stdexcept>

namespace dragon::bench::torch_eager {

void EagerOpTable::add(std::string op_kind, std::string call, EagerOp run) {
  std::string name = op_kind;
  if (!entries_.emplace(std::move(op_kind), EagerOpEntry{std::move(call), std::move(run)}).second) {
    throw std::logic_error("eager baselines: op kind " + name + " registered twice");
  }
}

const EagerOpEntry* EagerOpTable::find(std::string_view op_kind) const {
  auto it = entries_.find(op_kind);
  return it == entries_.end() ? nullptr : &it->second;
}

const EagerOpTable& eager_op_table() {
  static const EagerOpTable table = [] {
    EagerOpTable t;
    add_matmul_ops(t);
    add_conv_ops(t);
    add_pool_ops(t);
    add_activation_ops(t);
    add_norm_ops(t);
    add_reduce_scan_ops(t);
    add_loss_ops(t);
    add_attention_ops(t);
    add_recsys_ops(t);
    add_fused_ops(t);
    return t;
  }();
  return table;
}

at::ScalarType to_scalar_type(ir::DataType dtype) {
  if (dtype == ir::DataType::f64()) return at::kDouble;
  if (dtype == ir::DataType::f32()) return at::kFloat;
  if (dtype == ir::DataType::f16()) return at::kHalf;
  if (dtype == ir::DataType::bf16()) return at::kBFloat16;
  if (dtype == ir::DataType::i8()) return at::kChar;
  if (dtype == ir::DataType::i32()) return at::kInt;
  if (dtype == ir::DataType::i64()) return at::kLong;
  if (dtype == ir::DataType::boolean()) return at::kBool;
  throw std::runtime_error("eager baselines: no torch type for a dtype of " + std::to_string(dtype.bits()) + " bits");
}

}  // namespace dragon::bench::torch_eager
