// The CUDA emitter's class, shared by its files: cuda_codegen.cc (kernels, launch
// configuration, allocations), cuda_vector_loop.cc (float4/float2/half2 accesses),
// cuda_async_copy.cc (cp.async copies, commit and wait groups) and cuda_tensor_intrin.cc
// (tensor-core blocks as warp-level code, planned by the table of cuda_warp_intrin.h).
// Private to codegen.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dragon/codegen/c_printer.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/async_copy_source.h"
#include "cuda_warp_intrin.h"

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
  std::string loop_pragma(const ir::ForNode* op) const override;
  // In a kernel with warp-level blocks: code outside them runs on lane 0 only.
  void visit_(const ir::SeqStmtNode* op) override;
  void visit_(const ir::IfThenElseNode* op) override;
  // cuda_async_copy.cc: under a loop annotated async_copy, a 4-byte copy from global into
  // shared memory is a cp.async.
  void visit_(const ir::BufferStoreNode* op) override;

 private:
  // Top level: kernels and the global workspaces around them.
  void collect_kernels(const ir::Stmt& s);
  void emit_kernel(const ir::Stmt& root, int index);
  void print_thread_binding(const ir::ForNode* op);
  void print_loop_of_kind(const ir::ForNode* op);  // print_for without the async_copy mode
  std::string unroll_pragma(const ir::ForNode* op) const;

  // cuda_vector_loop.cc: a vectorized loop of one contiguous, aligned store becomes vector
  // loads and a vector store; false when it does not qualify (printed as scalars then).
  bool try_print_vector_loop(const ir::ForNode* op);

  // cuda_async_copy.cc: whether a loop carries the async_copy annotation; what a store
  // copies when it may be issued as cp.async (inside such a loop, shared <- global, one
  // type, perhaps zero where a guard fails: lower/async_copy_source.h), else nullopt; one
  // cp.async of `bytes` bytes, zero-filled where `guard` (C code; empty: none) is false;
  // commit and wait groups.
  static bool is_async_copy_loop(const ir::ForNode* op);
  std::optional<lower::AsyncCopySource> async_copy_of(const ir::BufferStoreNode* store) const;
  void print_async_copy(const std::string& dst, const std::string& src, int64_t bytes, const std::string& guard = "");
  void print_async_effect(const ir::CallNode* call);

  // cuda_tensor_intrin.cc: before a kernel is printed, its blocks annotated
  // "tensor_intrin" = NAME are planned by NAME (warp_intrin_planners()); when every one
  // has a planner the kernel runs in warp mode (threadIdx.x = the 32 lanes), else every
  // block of the kernel stays scalar (correct: fragments are then whole tiles per thread).
  // Throws UserError naming the kernel for a block whose planner refuses it.
  void plan_warp_blocks(const ir::Stmt& root, const std::string& kernel, const std::map<std::string, int64_t>& extents);
  // Prints a planned block as its warp call; false when the kernel is not in warp mode.
  bool print_tensor_intrin(const ir::ForNode* op, const std::string& intrin);
  // A statement of a warp-mode kernel: under `if (lane == 0)` unless it holds a warp block
  // or a barrier (which every lane must reach) or reads threadIdx.x (cooperative code).
  void print_lane_stmts(const std::vector<ir::Stmt>& stmts);
  bool needs_all_lanes(const ir::Stmt& s) const;
  // Whether `s` is a wgmma call or a loop nest of nothing but wgmma calls.
  bool holds_only_wgmma(const ir::Stmt& s) const;
  // The barrier of the kernel's lanes after lane-0 code: __syncwarp() or the warpgroup's.
  std::string lanes_sync() const;
  // Where element `index` (printed) of `buffer` is stored: the index itself, or its
  // 128-byte swizzle for a shared buffer that wgmma blocks read (tensor_intrin.h).
  std::string physical_index(const ir::Buffer& buffer, const std::string& index) const;
  std::string flat_index(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) override;

  // Per kernel, in warp mode: each tensorized unit loop's call, the fragments' layouts, the
  // lane variable's name, the lanes of a group (32 or 128), the swizzled shared buffers.
  // Otherwise empty, and `scalar_reason_` says why blocks stay scalar.
  bool warp_mode_ = false;
  int64_t lanes_ = 32;
  std::unordered_set<const ir::BufferNode*> swizzled_;
  std::unordered_set<const ir::VarNode*> fragment_index_vars_;  // variables in fragment slots' offsets
  std::set<std::string> used_helpers_;  // every kernel's warp helpers, for the prelude
  int wgmma_run_depth_ = 0;             // inside a run of wgmma calls (fenced before, waited after)
  bool uses_warp_blocks_ = false;  // some kernel of the function: the prelude gets the warp helpers
  bool uses_warpgroup_blocks_ = false;  // some kernel has wgmma blocks: the prelude gets their helpers
  bool uses_async_copies_ = false;  // some kernel issues cp.async: the prelude gets its helpers
  int async_depth_ = 0;             // loops annotated async_copy around the statement printed
  std::unordered_map<const ir::ForNode*, WarpCall> warp_calls_;
  std::unordered_map<const ir::BufferNode*, FragmentLayout> fragments_;
  // f32 fragments split into 3xTF32's big and small parts at their loads: declared twice as
  // long (prepare_tf32_fragments_once).
  std::unordered_set<const ir::BufferNode*> split_fragments_;
  std::string lane_name_;
  const ir::VarNode* lane_var_ = nullptr;  // the kernel's threadIdx.x variable, when it binds one
  std::string scalar_reason_;

  const ir::PrimFunc* func_ = nullptr;
  std::vector<ir::Stmt> kernel_roots_;
  std::vector<ir::Buffer> workspaces_;
  CudaSource result_;
  // Per kernel: launch extent of each tag, and each shared buffer's byte offset.
  std::map<std::string, int64_t> launch_extent_;
  std::unordered_map<const ir::BufferNode*, int64_t> shared_offset_;
};

}  // namespace dragon::codegen
