// The CUDA emitter's class, shared by its files: cuda_codegen.cc (kernels, launch
// configuration, allocations), cuda_vector_loop.cc (float4/float2/half2 accesses) and
// cuda_tensor_intrin.cc (the extension point for tensor-core blocks). Private to codegen.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/codegen/c_printer.h"
#include "dragon/codegen/cuda_codegen.h"

namespace dragon::codegen {

class CudaEmitter final : public CPrinter {
 public:
  CudaSource emit(const ir::PrimFunc& func, const lower::Target& target);

 protected:
  std::string f16_type() const override { return "__half"; }
  std::string bf16_type() const override { return "__nv_bfloat16"; }
  std::string half_to_float(const std::string& value, ir::DataType from) const override;
  std::string float_to_half(const std::string& value, ir::DataType from, ir::DataType to) const override;
  std::string math_call(ir::Intrinsic op, ir::DataType dtype, const std::vector<std::string>& args) const override;
  void print_effect(const ir::CallNode* call) override;
  void print_for(const ir::ForNode* op) override;
  void print_allocate(const ir::AllocateNode* op) override;

 private:
  // Top level: kernels and the global workspaces around them.
  void collect_kernels(const ir::Stmt& s);
  void emit_kernel(const ir::Stmt& root, int index);
  void print_thread_binding(const ir::ForNode* op);
  std::string unroll_pragma(const ir::ForNode* op) const;

  // cuda_vector_loop.cc: a vectorized loop of one contiguous, aligned store becomes vector
  // loads and a vector store; false when it does not qualify (printed as scalars then).
  bool try_print_vector_loop(const ir::ForNode* op);

  // cuda_tensor_intrin.cc: blocks annotated "tensor_intrin" = NAME are dispatched by NAME
  // to a printer of that instruction; false when none is registered (scalar code then).
  bool print_tensor_intrin(const ir::ForNode* op, const std::string& intrin);
  using TensorIntrinPrinter = bool (CudaEmitter::*)(const ir::ForNode* op);
  static const std::map<std::string, TensorIntrinPrinter, std::less<>>& tensor_intrin_printers();

  const ir::PrimFunc* func_ = nullptr;
  std::vector<ir::Stmt> kernel_roots_;
  std::vector<ir::Buffer> workspaces_;
  CudaSource result_;
  // Per kernel: launch extent of each tag, and each shared buffer's byte offset.
  std::map<std::string, int64_t> launch_extent_;
  std::unordered_map<const ir::BufferNode*, int64_t> shared_offset_;
};

}  // namespace dragon::codegen
