// Flat functions that cannot be built for CUDA, for tests of how a failure is kept to its
// own function (compile_cuda_batch, the tuner's NVRTC children): one NVRTC rejects, one
// code generation refuses.
#pragma once

#include "dragon/ir/function.h"
#include "dragon/ir/stmt.h"

namespace dragon::testing {

inline ir::PrimFunc writes_its_input() {
  ir::Buffer in = ir::Buffer::make("in", ir::DataType::f32(), {32});
  ir::Buffer out = ir::Buffer::make("out", ir::DataType::f32(), {32});
  ir::Var bx("bx"), tx("tx");
  ir::Stmt store = ir::BufferStoreNode::make(in, ir::BufferLoadNode::make(out, {tx}), {tx});
  ir::Stmt kernel = ir::ForNode::make(
      bx, 0, 1, ir::ForKind::kThreadBinding, ir::ForNode::make(tx, 0, 32, ir::ForKind::kThreadBinding, store, "threadIdx.x"),
      "blockIdx.x");
  return ir::PrimFunc::make("writes_input", {{in, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}}, kernel);
}

// Code generation refuses it: a store under a serial loop, outside any kernel.
inline ir::PrimFunc outside_any_kernel() {
  ir::Buffer out = ir::Buffer::make("out", ir::DataType::f32(), {8});
  ir::Var i("i");
  ir::Stmt store = ir::BufferStoreNode::make(out, ir::FloatImmNode::make(ir::DataType::f32(), 1.0), {i});
  ir::Stmt loop = ir::ForNode::make(i, 0, 8, ir::ForKind::kSerial, store);
  return ir::PrimFunc::make("outside_kernels", {{out, ir::ParamRole::kOutput, {}}}, loop);
}

}  // namespace dragon::testing
