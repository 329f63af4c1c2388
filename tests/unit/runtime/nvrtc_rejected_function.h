// A flat function that prints but that NVRTC rejects: its kernel stores into its input,
// which the generated code declares const. For tests of how a compile failure is kept to
// its own function (compile_cuda_batch, the tuner's NVRTC children).
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

}  // namespace dragon::testing
