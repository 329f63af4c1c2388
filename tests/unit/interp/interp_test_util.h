// Helpers for interpreter tests: wrap hand-built statements in a root block and a
// PrimFunc, and run them on explicit arguments. Not a builder of real kernels (see ops/te.h).
#pragma once

#include <vector>

#include "dragon/interp/interpreter.h"
#include "dragon/ir/function.h"
#include "dragon/ir/op.h"
#include "dragon/ir/stmt.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::interp::testing {

// A function whose body is the root block around `body`, allocating `allocs`.
inline ir::PrimFunc make_func(std::vector<ir::Param> params, ir::Stmt body, std::vector<ir::Buffer> allocs = {}) {
  ir::Block root = ir::BlockNode::make("root", {}, {}, {}, std::move(body), {}, std::move(allocs));
  return ir::PrimFunc::make("test", std::move(params), ir::BlockRealizeNode::make({}, ir::make_bool(true), root));
}

inline ir::Param input(const ir::Buffer& buffer) { return ir::Param{buffer, ir::ParamRole::kInput, {}}; }
inline ir::Param output(const ir::Buffer& buffer) { return ir::Param{buffer, ir::ParamRole::kOutput, {}}; }

// for (var in [0, extent)) body
inline ir::Stmt loop(const ir::Var& var, int64_t extent, ir::Stmt body) {
  return ir::ForNode::make(var, ir::make_const(var.dtype(), 0), ir::make_const(var.dtype(), extent),
                           ir::ForKind::kSerial, std::move(body));
}

// A host tensor of `dtype` and `shape` holding `values` (rounded to the type).
inline tensor::HostTensor tensor(ir::DataType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  tensor::HostTensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set(static_cast<int64_t>(i), values[i]);
  return t;
}

}  // namespace dragon::interp::testing
