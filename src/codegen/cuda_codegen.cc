// The CUDA emitter (cuda_codegen.h): kernels of the flat form, their parameters and launch
// configuration, thread variables, guards, shared memory (all of it dynamic, so a block
// may opt in to more than 48 KB) and barriers.
#include "dragon/codegen/cuda_codegen.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuda_emitter.h"
#include "cuda_prelude.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/support/error.h"

namespace dragon::codegen {
namespace {

constexpr int64_t kSharedAlignment = 16;
constexpr int64_t kSwizzleAtomBytes = 1024;  // 8 rows of 128 bytes

bool is_shared(const std::string& scope) { return scope == "shared" || scope == "shared.dyn"; }

// Which dimension of the launch a thread tag names: ("blockIdx", 0) for "blockIdx.x".
std::pair<std::string, int> split_tag(const std::string& tag) {
  auto dot = tag.find('.');
  DRAGON_CHECK(dot != std::string::npos && dot + 2 == tag.size(), "bad thread tag '{}'", tag);
  return {tag.substr(0, dot), tag[dot + 1] - 'x'};
}

// What a kernel uses: thread tags with their largest extent, buffers, shared allocations.
class KernelScan final : public ir::StmtExprVisitor {
 public:
  std::map<std::string, int64_t> extents;
  std::set<const ir::BufferNode*> buffers;
  std::vector<const ir::BufferNode*> shared;
  // Buffers the kernel stores to and loads from (tensorized blocks keep their stores and
  // loads in the IR: the emitter prints them as intrinsics).
  std::set<const ir::BufferNode*> written, read;

  // Whether the kernel may read `buffer` after some thread wrote it.
  bool written_and_read(const ir::BufferNode* buffer) const { return written.count(buffer) && read.count(buffer); }

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::kThreadBinding && op->thread_tag.rfind("vthread", 0) != 0) {
      auto extent = ir::as_const_int(op->extent);
      if (!extent) {
        throw UserError(fmt::format("CUDA codegen: the loop bound to {} has extent {}, not a constant",
                                    op->thread_tag, ir::print_expr(op->extent)));
      }
      int64_t& e = extents[op->thread_tag];
      e = std::max(e, *extent);
    }
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::AllocateNode* op) override {
    if (is_shared(op->buffer->scope)) shared.push_back(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    buffers.insert(op->buffer.get());
    written.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    buffers.insert(op->buffer.get());
    read.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
};

// `__restrict__ ` for a global buffer no thread of the kernel both writes and reads, else
// nothing. With __restrict__ on a buffer one thread writes and others then read (a row's
// maximum stored by thread 0 and read by all after __syncthreads), NVRTC moved the other
// threads' loads above the barrier: they read the value from before the store.
std::string global_qualifier(const KernelScan& scan, const ir::BufferNode* buffer) {
  return scan.written_and_read(buffer) ? "" : "__restrict__ ";
}

}  // namespace

std::string CudaEmitter::half_to_float(const std::string& value, ir::DataType from) const {
  return fmt::format("{}({})", from == ir::DataType::f16() ? "__half2float" : "__bfloat162float", value);
}

std::string CudaEmitter::float_to_half(const std::string& value, ir::DataType from, ir::DataType to) const {
  bool f16 = to == ir::DataType::f16();
  if (from == ir::DataType::f64()) return fmt::format("{}({})", f16 ? "__double2half" : "__double2bfloat16", value);
  return fmt::format("{}({})", f16 ? "__float2half_rn" : "__float2bfloat16_rn", value);
}

std::string CudaEmitter::math_call(ir::Intrinsic op, ir::DataType dtype, const std::vector<std::string>& args) const {
  if (op == ir::Intrinsic::Rsqrt) return fmt::format("rsqrt{}({})", dtype == ir::DataType::f32() ? "f" : "", args[0]);
  return CPrinter::math_call(op, dtype, args);
}

void CudaEmitter::print_effect(const ir::CallNode* call) {
  switch (call->op) {
    case ir::Intrinsic::SyncThreads:
      // Shared memory written by ordinary stores (and cp.async) that wgmma reads next goes
      // through the async proxy: each writing thread fences before the barrier.
      if (warp_mode_ && lanes_ == 128) line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
      line("__syncthreads();");
      return;
    case ir::Intrinsic::AsyncCommitGroup:
    case ir::Intrinsic::AsyncWaitGroup: print_async_effect(call); return;
    default: CPrinter::print_effect(call);
  }
}

void CudaEmitter::print_for(const ir::ForNode* op) {
  // The outermost loop that holds only wgmma calls: one fence before, one wait after, and
  // the calls inside it in flight together (cuda_wgmma.cc).
  if (warp_mode_ && lanes_ == 128 && wgmma_run_depth_ == 0 && holds_only_wgmma(ir::Stmt(op))) {
    line("dragon_wgmma_fence();");
    ++wgmma_run_depth_;
    print_for(op);
    --wgmma_run_depth_;
    line("dragon_wgmma_wait_all();");
    return;
  }
  if (is_async_copy_loop(op)) {
    ++async_depth_;
    print_loop_of_kind(op);
    --async_depth_;
    return;
  }
  print_loop_of_kind(op);
}

void CudaEmitter::print_loop_of_kind(const ir::ForNode* op) {
  if (auto it = op->annotations.find("tensor_intrin"); it != op->annotations.end()) {
    const auto* name = std::get_if<std::string>(&it->second);
    DRAGON_CHECK(name != nullptr, "tensor_intrin annotation is not a string");
    if (print_tensor_intrin(op, *name)) return;
    line(fmt::format("// tensor_intrin {}: scalar code ({})", *name, scalar_reason_));
  }
  switch (op->for_kind) {
    case ir::ForKind::kThreadBinding:
      if (op->thread_tag.rfind("vthread", 0) != 0) {
        print_thread_binding(op);
        return;
      }
      break;  // virtual threads left by lowering run as a serial loop
    case ir::ForKind::kVectorized:
      bind_loop(op);
      if (try_print_vector_loop(op)) return;
      line("#pragma unroll");
      print_loop_header(op);
      print_stmt(op->body);
      close();
      return;
    case ir::ForKind::kUnrolled:
      bind_loop(op);
      line(unroll_pragma(op));
      print_loop_header(op);
      print_stmt(op->body);
      close();
      return;
    case ir::ForKind::kSerial:
    case ir::ForKind::kParallel: break;  // a parallel loop inside a kernel is a serial loop
  }
  CPrinter::print_for(op);
}

std::string CudaEmitter::unroll_pragma(const ir::ForNode* op) const {
  // Fully unrolling a long loop (or a nest of them) multiplies NVRTC's time and the code's
  // size for no gain; past the limit the compiler unrolls by a fixed factor.
  constexpr int64_t kMaxFullUnroll = 256;
  auto extent = ir::as_const_int(op->extent);
  if (extent && *extent <= kMaxFullUnroll) return "#pragma unroll";
  return "#pragma unroll 16";
}

void CudaEmitter::print_thread_binding(const ir::ForNode* op) {
  auto [kind, dim] = split_tag(op->thread_tag);
  int64_t launch = launch_extent_.at(op->thread_tag);
  int64_t extent = *ir::as_const_int(op->extent);
  bind_loop(op);
  std::string v = var_name(op->loop_var);
  std::string type = type_name(op->loop_var.dtype());
  std::string value = fmt::format("({}){}.{}", type, kind, "xyz"[dim]);
  if (!ir::is_const_int(op->min, 0)) value = fmt::format("({} + {})", print_expr(op->min), value);
  line(fmt::format("const {} {} = {};", type, v, value));
  if (extent < launch) {
    open(fmt::format("if ({}.{} < {})", kind, "xyz"[dim], extent));
    print_stmt(op->body);
    close();
    return;
  }
  print_stmt(op->body);
}

void CudaEmitter::print_allocate(const ir::AllocateNode* op) {
  const ir::Buffer& buffer = op->buffer;
  std::string type = type_name(buffer->dtype);
  std::string name = buffer_name(buffer);
  int64_t count = std::max<int64_t>(buffer->num_elements(), 1);
  if (is_shared(buffer->scope)) {
    line(fmt::format("{}* {} = ({}*)(dragon_shared + {});", type, name, type, shared_offset_.at(buffer.get())));
  } else if (buffer->scope == "global") {
    throw InternalError(fmt::format("global buffer {} allocated inside a kernel (lower.h puts them around kernels)",
                                    buffer->name));
  } else if (auto fragment = fragments_.find(buffer.get()); warp_mode_ && fragment != fragments_.end()) {
    // This lane's share of the tiles (cuda_warp_intrin.h, FragmentLayout).
    const int64_t lanes = fragment->second.lanes;
    const bool split = split_fragments_.count(buffer.get()) != 0;
    line(fmt::format("__align__(16) {} {}[{}];  // {}: this lane's {} of {} elements, {}x{} tiles{}", type, name,
                     (split ? 2 : 1) * count / lanes, lanes == 32 ? "warp" : "warpgroup", count / lanes, count,
                     fragment->second.rows, fragment->second.cols,
                     split ? ", then their 3xTF32 small parts" : ""));
  } else {
    line(fmt::format("__align__(16) {} {}[{}];  // {}", type, name, count, buffer->scope));
  }
  print_stmt(op->body);
}

void CudaEmitter::collect_kernels(const ir::Stmt& s) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& item : seq->seq) collect_kernels(item);
  } else if (const auto* alloc = s.as<ir::AllocateNode>(); alloc && alloc->buffer->scope == "global") {
    workspaces_.push_back(alloc->buffer);
    collect_kernels(alloc->body);
  } else if (const auto* loop = s.as<ir::ForNode>(); loop && loop->for_kind == ir::ForKind::kThreadBinding) {
    kernel_roots_.push_back(s);
  } else {
    throw UserError(fmt::format(
        "CUDA codegen: function {} has code outside any kernel (every statement must be under a loop bound "
        "to blockIdx/threadIdx, lower.h):\n{}",
        (*func_)->name, ir::print_stmt(s)));
  }
}

void CudaEmitter::emit_kernel(const ir::Stmt& root, int index) {
  KernelScan scan;
  scan.visit(root);
  launch_extent_ = scan.extents;
  KernelLaunch launch;
  launch.name = names_.fresh(fmt::format("{}_kernel{}", (*func_)->name, index));
  plan_warp_blocks(root, launch.name, scan.extents);
  for (const auto& [tag, extent] : scan.extents) {
    auto [kind, dim] = split_tag(tag);
    DRAGON_CHECK(dim >= 0 && dim < 3 && (kind == "blockIdx" || kind == "threadIdx"), "bad thread tag '{}'", tag);
    (kind == "blockIdx" ? launch.grid : launch.block)[dim] = extent;
  }
  if (warp_mode_) launch.block[0] = lanes_;  // the lanes of the warp-level (warpgroup-level) blocks
  shared_offset_.clear();
  int64_t shared_bytes = 0;
  for (const ir::BufferNode* buffer : scan.shared) {
    // A swizzled buffer starts on a 1024-byte swizzle atom: the hardware swizzles absolute
    // shared addresses, the emitter the index from the buffer's start.
    const int64_t alignment = swizzled_.count(buffer) != 0 ? kSwizzleAtomBytes : kSharedAlignment;
    shared_bytes = (shared_bytes + alignment - 1) / alignment * alignment;
    shared_offset_[buffer] = shared_bytes;
    shared_bytes += buffer->num_elements() * buffer->dtype.bytes();
  }
  launch.dynamic_shared_bytes = shared_bytes;

  std::vector<std::string> params;
  const auto& func_params = (*func_)->params;
  for (size_t i = 0; i < func_params.size(); ++i) {
    const ir::Buffer& buffer = func_params[i].buffer;
    if (scan.buffers.count(buffer.get()) == 0) continue;
    bool read_only = func_params[i].role == ir::ParamRole::kInput;
    params.push_back(fmt::format("{}{}* {}{}", read_only ? "const " : "", type_name(buffer->dtype),
                                 global_qualifier(scan, buffer.get()), buffer_name(buffer)));
    launch.args.push_back({KernelArg::Kind::kParam, static_cast<int>(i)});
  }
  for (size_t i = 0; i < workspaces_.size(); ++i) {
    if (scan.buffers.count(workspaces_[i].get()) == 0) continue;
    params.push_back(fmt::format("{}* {}{}", type_name(workspaces_[i]->dtype),
                                 global_qualifier(scan, workspaces_[i].get()), buffer_name(workspaces_[i])));
    launch.args.push_back({KernelArg::Kind::kWorkspace, static_cast<int>(i)});
  }

  out_ << "\n";
  const size_t begin = static_cast<size_t>(out_.tellp());
  open(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", launch.threads_per_block(),
                   launch.name, fmt::join(params, ", ")));
  if (shared_bytes > 0) {
    line(fmt::format("extern __shared__ __align__({}) unsigned char dragon_shared[];",
                     swizzled_.empty() ? kSharedAlignment : kSwizzleAtomBytes));
  }
  if (warp_mode_) {
    line(fmt::format("const int32_t {} = (int32_t)threadIdx.x;  // {}-level blocks run on all {} lanes, other "
                     "code on lane 0",
                     lane_name_, lanes_ == 32 ? "warp" : "warpgroup", lanes_));
  }
  print_stmt(root);
  close();
  result_.kernel_spans.emplace_back(begin, static_cast<size_t>(out_.tellp()));
  result_.kernels.push_back(std::move(launch));
}

CudaSource CudaEmitter::emit(const ir::PrimFunc& func, const lower::Target& target) {
  func_ = &func;
  collect_kernels(func->body);
  for (const ir::Buffer& buffer : workspaces_) {
    result_.workspaces.push_back({buffer_name(buffer), buffer->num_elements() * buffer->dtype.bytes()});
  }
  out_ << "// " << func->name << " for " << (target.arch.empty() ? "cuda" : target.arch) << "\n";
  for (size_t i = 0; i < kernel_roots_.size(); ++i) {
    emit_kernel(kernel_roots_[i], static_cast<int>(i));
    uses_warp_blocks_ = uses_warp_blocks_ || (warp_mode_ && lanes_ == 32);
    uses_warpgroup_blocks_ = uses_warpgroup_blocks_ || (warp_mode_ && lanes_ == 128);
  }
  // The prelude's parts (PreludePart): what every kernel uses, then the helpers this
  // function's kernels call, and the fp16/bf16 headers only where kernels or helpers name
  // what they declare.
  std::vector<PreludePart>& parts = result_.prelude_parts;
  parts.push_back({kPreludeCommon, "common", cuda_common_prelude()});
  if (uses_warp_blocks_ || uses_warpgroup_blocks_ || uses_async_copies_) {
    parts.push_back({kPreludeSharedAddress, "shared_address", std::string(shared_address_prelude())});
  }
  if (uses_warp_blocks_) parts.push_back({kPreludeMma, "mma", std::string(mma_prelude())});
  if (std::any_of(used_helpers_.begin(), used_helpers_.end(), [](const std::string& h) { return is_tf32_helper(h); })) {
    parts.push_back({kPreludeMma, "mma_tf32", std::string(mma_tf32_prelude())});
  }
  if (std::any_of(used_helpers_.begin(), used_helpers_.end(), [](const std::string& h) { return is_tf32_mixed_helper(h); })) {
    parts.push_back({kPreludeMma, "mma_tf32_mixed", std::string(mma_tf32_mixed_prelude())});
  }
  if (uses_warpgroup_blocks_) {
    parts.push_back({kPreludeWgmma, "wgmma", std::string(wgmma_common_prelude())});
    for (const std::string& helper : used_helpers_) {
      std::string text = wgmma_helper_prelude(helper);
      if (!text.empty()) parts.push_back({kPreludeWgmmaHelper, helper, std::move(text)});
    }
  }
  if (uses_async_copies_) parts.push_back({kPreludeAsyncCopy, "async_copy", std::string(async_copy_prelude())});
  std::string body = out_.str();
  bool half = uses_half_headers(body);
  for (const PreludePart& part : parts) half = half || uses_half_headers(part.text);
  if (half) parts.push_back({kPreludeHalfHeaders, "half_headers", std::string(half_headers_prelude())});
  std::sort(parts.begin(), parts.end(), prelude_order);
  std::string prelude = join_prelude(parts);
  result_.prelude_size = prelude.size();
  for (auto& [begin, end] : result_.kernel_spans) begin += prelude.size(), end += prelude.size();
  result_.code = std::move(prelude) + body;
  return std::move(result_);
}

bool CudaEmitter::holds_only_wgmma(const ir::Stmt& s) const {
  if (const auto* loop = s.as<ir::ForNode>()) {
    if (auto it = warp_calls_.find(loop); it != warp_calls_.end()) {
      return it->second.helper.rfind("dragon_wgmma_m64n", 0) == 0;
    }
    return holds_only_wgmma(loop->body);
  }
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& item : seq->seq) {
      if (!holds_only_wgmma(item)) return false;
    }
    return !seq->seq.empty();
  }
  return false;
}

std::string CudaEmitter::physical_index(const ir::Buffer& buffer, const std::string& index) const {
  if (swizzled_.count(buffer.get()) == 0) return index;
  return fmt::format("dragon_swizzle128_b16({})", index);
}

std::string CudaEmitter::flat_index(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
  return physical_index(buffer, CPrinter::flat_index(buffer, indices));
}

std::optional<std::string> kernel_definition_key(const CudaSource& source, size_t k) {
  if (source.kernel_spans.size() != source.kernels.size()) return std::nullopt;
  DRAGON_CHECK(k < source.kernels.size(), "kernel {} of {}", k, source.kernels.size());
  const auto [begin, end] = source.kernel_spans[k];
  std::string key = source.code.substr(begin, end - begin);
  const std::string& name = source.kernels[k].name;
  const size_t named = key.find(" " + name + "(");
  DRAGON_CHECK(named != std::string::npos, "kernel {}'s span does not hold its definition", name);
  key.erase(named + 1, name.size());
  return key;
}

std::vector<size_t> kernel_definition_hashes(const CudaSource& source) {
  std::vector<size_t> hashes;
  for (size_t k = 0; k < source.kernels.size(); ++k) {
    if (std::optional<std::string> key = kernel_definition_key(source, k)) hashes.push_back(std::hash<std::string>{}(*key));
  }
  return hashes;
}

CudaSource generate_cuda(const ir::PrimFunc& flat, const lower::Target& target) {
  CudaEmitter emitter;
  return emitter.emit(flat, target);
}

}  // namespace dragon::codegen
