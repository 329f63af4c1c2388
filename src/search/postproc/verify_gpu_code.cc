// VerifyGPUCode (MetaSchedule's postprocessor): rejects a candidate the GPU cannot run or
// the sketch did not mean: per kernel (each top-level nest), threads per block, blocks per
// grid (one too tall for CUDA along y or z is folded into x by lowering where it fits),
// virtual threads, the bytes of a vectorized access and shared memory against the target's
// limits (shared buffers of a software pipeline counted once per stage), each tiled
// block's thread-extent bounds (the multi-level tiling rule's
// "thread_extent_low/high_inclusive" annotations), a thread loop nested in one of the
// same tag that reads the outer one's variable (one hardware index, two values), and the
// registers of a thread's register arrays (local buffers, its lane's share of mma.sync and
// wgmma fragments) against the register file. Read from the block IR, without
// lowering (a few microseconds); with "lower": true it runs the lowering pipeline, whose
// own verify_gpu_code is exact, instead.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/support/error.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

constexpr const char* kLow = "meta_schedule.thread_extent_low_inclusive";
constexpr const char* kHigh = "meta_schedule.thread_extent_high_inclusive";

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

std::optional<int64_t> int_annotation(const ir::BlockNode* block, const char* key) {
  auto it = block->annotations.find(key);
  if (it == block->annotations.end()) return std::nullopt;
  const auto* v = std::get_if<int64_t>(&it->second);
  return v != nullptr ? std::optional<int64_t>(*v) : std::nullopt;
}

// Whether `block` asks storage_align to pad the rows of `buffer`.
bool pads_rows_of(const ir::BlockNode* block, const std::string& buffer) {
  auto it = block->annotations.find(std::string(ir::kBufferDimAlignKey));
  if (it == block->annotations.end()) return false;
  const auto* text = std::get_if<std::string>(&it->second);
  if (text == nullptr) return false;
  for (const ir::BufferDimAlign& a : ir::parse_buffer_dim_align(*text)) {
    if (a.buffer == buffer) return true;
  }
  return false;
}

// What one kernel (a top-level nest) uses.
struct KernelUse {
  std::map<std::string, int64_t> extents;  // thread tag -> largest extent bound to it
  bool warp_blocks = false;                // tensorized blocks: threadIdx.x is the 32 lanes
  int64_t widest_wgmma_n = 0;              // the largest N of the kernel's wgmma m64nNk16 blocks
  int64_t widest_vector_bytes = 0;
  std::string widest_vector_loop;
  std::vector<const ir::BlockNode*> blocks;
  // Shared buffers written in the kernel: the loops from the kernel's top down to the
  // writer, outermost first (through enclosing blocks: a tensorized tile's inner block).
  std::map<const ir::BufferNode*, std::vector<const ir::ForNode*>> shared_writers;
  // Register arrays: a thread's "local" buffers and the per-lane fragments of "warp" ones
  // (mma.sync operands and accumulators, wgmma accumulators): the first block writing
  // each, its loops as above, and the lanes sharing one instance (1 for local; 32 for a
  // warp's fragments, 128 for a warpgroup's: the writer's tensor intrinsic says which).
  struct RegisterWriter {
    const ir::BlockRealizeNode* realize = nullptr;
    std::vector<const ir::ForNode*> loops;
    int64_t lanes = 1;
  };
  std::map<const ir::BufferNode*, RegisterWriter> register_writers;
  // Every block's loops from the kernel's top, to find where readers meet writers.
  std::map<const ir::BlockNode*, std::vector<const ir::ForNode*>> loops_of;
  int64_t cross_thread_bytes = 0;  // the trees' shared buffers lowering will add
  // A shared buffer whose rows storage_align pads: the estimate counts the tile unpadded.
  bool padded_shared = false;
  // A loop bound to a tag inside another loop bound to it whose variable it uses: one
  // hardware index cannot be two loop values (unify_thread_bindings refuses it).
  std::string nested_tag_conflict;
};

bool uses_var(const ir::Stmt& body, const ir::VarNode* var) {
  struct Finder : ir::StmtExprVisitor {
    const ir::VarNode* var = nullptr;
    bool found = false;
    using ir::StmtExprVisitor::visit_;
    void visit_(const ir::VarNode* op) override { found = found || op == var; }
  } finder;
  finder.var = var;
  finder.visit(body);
  return finder.found;
}

int widest_access_bytes(const ir::Stmt& body) {
  struct Widest : ir::StmtExprVisitor {
    int bytes = 0;
    using ir::StmtExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      bytes = std::max(bytes, op->buffer->dtype.bytes());
      ir::StmtExprVisitor::visit_(op);
    }
    void visit_(const ir::BufferStoreNode* op) override {
      bytes = std::max(bytes, op->buffer->dtype.bytes());
      ir::StmtExprVisitor::visit_(op);
    }
  } w;
  w.visit(body);
  return w.bytes;
}

// The lanes that share one instance of a "warp" buffer its writer `block` writes: a
// warpgroup's 128 for the wgmma family, else a warp's 32 (an untensorized writer of a
// fragment, such as a decomposed init before tensorization, counted as the mma.sync one).
int64_t fragment_lanes(const ir::BlockNode* block) {
  auto intrin = block->annotations.find(std::string(schedule::kTensorIntrinAnnotation));
  const auto* name = intrin == block->annotations.end() ? nullptr : std::get_if<std::string>(&intrin->second);
  return name != nullptr ? schedule::tensor_intrin_lanes(*name) : 32;
}

class KernelScan : public ir::StmtVisitor {
 public:
  explicit KernelScan(KernelUse& use) : use_(use) {}
  using ir::StmtVisitor::visit_;

  void visit_(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::kThreadBinding) {
      int64_t extent = ir::as_const_int(op->extent).value_or(1);
      int64_t& e = use_.extents[op->thread_tag];
      e = std::max(e, extent);
      for (const ir::ForNode* outer : path_) {
        if (outer->for_kind == ir::ForKind::kThreadBinding && outer->thread_tag == op->thread_tag &&
            use_.nested_tag_conflict.empty() && uses_var(op->body, outer->loop_var.get())) {
          use_.nested_tag_conflict = fmt::format("loop {} bound to {} inside loop {} bound to it uses its variable",
                                                 op->loop_var.name(), op->thread_tag, outer->loop_var.name());
        }
      }
    }
    if (op->for_kind == ir::ForKind::kVectorized) {
      int64_t bytes = ir::as_const_int(op->extent).value_or(1) * widest_access_bytes(op->body);
      if (bytes > use_.widest_vector_bytes) {
        use_.widest_vector_bytes = bytes;
        use_.widest_vector_loop = op->loop_var.name();
      }
    }
    loops_.push_back(op);
    path_.push_back(op);
    ir::StmtVisitor::visit_(op);
    path_.pop_back();
    loops_.pop_back();
  }

  void visit_(const ir::BlockRealizeNode* op) override {
    const ir::BlockNode* block = op->block.get();
    use_.blocks.push_back(block);
    use_.loops_of[block] = path_;
    auto intrin = block->annotations.find(std::string(schedule::kTensorIntrinAnnotation));
    if (intrin != block->annotations.end()) {
      use_.warp_blocks = true;
      const auto* name = std::get_if<std::string>(&intrin->second);
      int n = 0;
      if (name != nullptr && std::sscanf(name->c_str(), "wgmma_m64n%dk16_", &n) == 1) {
        use_.widest_wgmma_n = std::max<int64_t>(use_.widest_wgmma_n, n);
      }
    }
    for (const ir::BufferRegion& w : block->writes) {
      const std::string& scope = w.buffer->scope;
      if (starts_with(scope, "shared") && use_.shared_writers.count(w.buffer.get()) == 0) {
        use_.shared_writers[w.buffer.get()] = path_;
      }
      if (starts_with(scope, "shared")) use_.padded_shared = use_.padded_shared || pads_rows_of(block, w.buffer->name);
      if ((scope == "local" || scope == "warp") && use_.register_writers.count(w.buffer.get()) == 0) {
        use_.register_writers[w.buffer.get()] = {op, path_, scope == "local" ? 1 : fragment_lanes(block)};
      }
    }
    // A reduction whose reduce loop is bound to threads: lowering adds a shared tree of
    // one slot per thread of the block.
    if (block->init.defined()) {
      int64_t slots = 1;
      bool across = false;
      BlockSite site{op, block, loops_, nullptr};
      for (const ir::ForNode* l : loops_) {
        if (l->for_kind != ir::ForKind::kThreadBinding || starts_with(l->thread_tag, "blockIdx.")) continue;
        slots *= ir::as_const_int(l->extent).value_or(1);
        across = across || loop_feeds_block(l, site).reduce;
      }
      if (across && !block->writes.empty()) use_.cross_thread_bytes += slots * block->writes[0].buffer->dtype.bytes();
    }
    // Nested blocks see their own loops only from here on.
    std::vector<const ir::ForNode*> saved = std::move(loops_);
    loops_.clear();
    ir::StmtVisitor::visit_(op);
    loops_ = std::move(saved);
  }

 private:
  KernelUse& use_;
  std::vector<const ir::ForNode*> loops_;  // up to the enclosing block
  std::vector<const ir::ForNode*> path_;   // from the kernel's top
};

// How many versions of a buffer written and read under `loop` a software pipeline keeps:
// the span of its stages (1 for a loop that is not pipelined).
int64_t pipeline_versions(const ir::ForNode* loop) {
  auto it = loop->annotations.find(lower::kSoftwarePipelineStage);
  if (it == loop->annotations.end()) return 1;
  const auto* text = std::get_if<std::string>(&it->second);
  if (text == nullptr) return 1;
  std::istringstream in(*text);
  int64_t lo = 0, hi = 0, s = 0;
  bool first = true;
  while (in >> s) {
    lo = first ? s : std::min(lo, s);
    hi = first ? s : std::max(hi, s);
    first = false;
  }
  return hi - lo + 1;
}

// Elements of `buffer` one thread block holds: what its writer writes while the loops it
// shares with the buffer's readers stay fixed (what compact_buffers keeps), counted over the
// writer's loops that feed spatial variables, times the stages of a software-pipelined
// loop among the shared ones (inject_software_pipeline's multi-buffering).
// How many of the writer's outermost loops every reader of `buffer` shares with it.
size_t loops_shared_with_readers(const KernelUse& use, const ir::BufferNode* buffer,
                                 const std::vector<const ir::ForNode*>& writer_loops) {
  size_t common = writer_loops.size();
  for (const ir::BlockNode* block : use.blocks) {
    bool reads = false;
    for (const ir::BufferRegion& r : block->reads) reads = reads || r.buffer.get() == buffer;
    if (!reads) continue;
    const std::vector<const ir::ForNode*>& reader_loops = use.loops_of.at(block);
    size_t prefix = 0;
    while (prefix < writer_loops.size() && prefix < reader_loops.size() && writer_loops[prefix] == reader_loops[prefix]) {
      ++prefix;
    }
    common = std::min(common, prefix);
  }
  return common;
}

int64_t footprint_elements(const KernelUse& use, const ir::BufferNode* buffer,
                           const std::vector<const ir::ForNode*>& writer_loops) {
  const size_t common = loops_shared_with_readers(use, buffer, writer_loops);
  int64_t elements = 1;
  for (size_t i = common; i < writer_loops.size(); ++i) {
    if (loop_feeds(writer_loops[i]).spatial) elements *= ir::as_const_int(writer_loops[i]->extent).value_or(1);
  }
  elements = std::min(elements, buffer->num_elements());
  for (size_t i = 0; i < common; ++i) elements *= pipeline_versions(writer_loops[i]);
  return elements;
}

// Elements of a local buffer one thread holds: one instance of its writer (an element, or
// a tensorized tile, whose loops are inside the intrinsic) times the writer's loops
// below those it shares with the buffer's readers that feed the writer's spatial variables,
// skipping loops bound to threads or blocks (other threads' copies); loops bound to
// virtual threads multiply wherever they are (one thread runs them all, each with its copy).
int64_t thread_footprint_elements(const KernelUse& use, const ir::BufferNode* buffer,
                                  const KernelUse::RegisterWriter& writer) {
  const ir::BlockNode* block = writer.realize->block.get();
  int64_t elements = 1;
  for (const ir::BufferRegion& w : block->writes) {
    if (w.buffer.get() != buffer) continue;
    for (const ir::Range& r : w.region) elements *= std::max<int64_t>(1, ir::as_const_int(r.extent).value_or(1));
  }
  const BlockSite site{writer.realize, block, {}, nullptr};
  const size_t common = loops_shared_with_readers(use, buffer, writer.loops);
  for (size_t i = 0; i < writer.loops.size(); ++i) {
    const ir::ForNode* l = writer.loops[i];
    const int64_t extent = ir::as_const_int(l->extent).value_or(1);
    if (l->for_kind == ir::ForKind::kThreadBinding) {
      if (starts_with(l->thread_tag, "vthread")) elements *= extent;
      continue;
    }
    if (i >= common && loop_feeds_block(l, site).spatial) elements *= extent;
  }
  return std::min(elements, buffer->num_elements());
}

// 32-bit registers one thread holds for the kernel's register arrays: its local buffers
// and its lane's share of the fragments.
int64_t local_registers_per_thread(const KernelUse& use) {
  int64_t registers = 0;
  for (const auto& [buffer, writer] : use.register_writers) {
    const int64_t bytes = thread_footprint_elements(use, buffer, writer) * buffer->dtype.bytes();
    registers += (bytes + 4 * writer.lanes - 1) / (4 * writer.lanes);
  }
  return registers;
}

// Bytes of shared memory one thread block of the kernel holds.
int64_t shared_bytes(const KernelUse& use) {
  int64_t total = use.cross_thread_bytes;
  for (const auto& [buffer, writer_loops] : use.shared_writers) {
    total += footprint_elements(use, buffer, writer_loops) * buffer->dtype.bytes();
  }
  return total;
}

class VerifyGpuCode : public Postproc {
 public:
  VerifyGpuCode(lower::Target target, bool lower) : target_(std::move(target)), lower_(lower) {}

  std::optional<std::string> apply(schedule::Schedule& sch) const override {
    if (!target_.is_gpu()) return std::nullopt;
    if (lower_) {
      try {
        lower::lower(sch.func(), target_);
      } catch (const UserError& e) {
        return std::string(e.what());
      }
      return std::nullopt;
    }
    const ir::BlockNode* root = sch.func().root_block();
    if (root == nullptr) return std::nullopt;
    std::vector<ir::Stmt> nests;
    if (const auto* seq = root->body.as<ir::SeqStmtNode>()) {
      nests = seq->seq;
    } else {
      nests.push_back(root->body);
    }
    bool near_shared_limit = false;
    for (size_t k = 0; k < nests.size(); ++k) {
      KernelUse use;
      KernelScan(use).visit(nests[k]);
      if (std::optional<std::string> why = check(use, k)) return why;
      // Padded rows can take more than twice the estimate, which counts them unpadded: a
      // 16-float row padded to a stride of 36 (an mma.sync tile's storage_align), times a
      // pipeline's stages, lowered to 457,200 bytes against an estimated 200 KB (a 3-stage
      // TF32 GEMM tile). Such kernels are settled by lowering from 40% of the limit.
      const double settled_above = use.padded_shared ? 0.4 : 0.9;
      near_shared_limit = near_shared_limit || static_cast<double>(shared_bytes(use)) >
                                                   settled_above * static_cast<double>(target_.max_shared_memory_per_block);
    }
    // The footprint above is an estimate from the writers' loops; lowering allocates the
    // compacted regions, which can be a little larger (233,612 bytes against an estimated
    // fit, a split-K GEMM's candidate). Near the limit, lowering settles it: a candidate
    // that passes here must lower.
    if (near_shared_limit) {
      try {
        lower::lower(sch.func(), target_);
      } catch (const UserError& e) {
        return std::string(e.what());
      }
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> check(const KernelUse& use, size_t kernel) const {
    int64_t threads = 1, vthreads = 1;
    bool has_x = false;
    for (const auto& [tag, extent] : use.extents) {
      if (starts_with(tag, "threadIdx.")) threads *= extent;
      if (starts_with(tag, "vthread.")) vthreads *= extent;
      has_x = has_x || tag == "threadIdx.x";
    }
    if (use.warp_blocks && !has_x) threads *= target_.warp_size;
    if (threads > target_.max_threads_per_block) {
      return fmt::format("kernel {}: {} threads per block, above the limit {}", kernel, threads,
                         target_.max_threads_per_block);
    }
    // A grid too tall along y or z launches folded into x where all of it fits there.
    auto blocks_along = [&](const char* tag) {
      auto it = use.extents.find(tag);
      return it == use.extents.end() ? int64_t{1} : it->second;
    };
    const int64_t x = blocks_along("blockIdx.x"), y = blocks_along("blockIdx.y"), z = blocks_along("blockIdx.z");
    if (target_.grid_launch(x, y, z) == lower::Target::GridLaunch::kNever) {
      return fmt::format("kernel {}: a grid of {} blocks, above the {} a launch holds", kernel,
                         static_cast<double>(x) * static_cast<double>(y) * static_cast<double>(z), target_.max_grid_x);
    }
    if (vthreads > target_.max_vthreads) {
      return fmt::format("kernel {}: {} virtual threads, above the limit {}", kernel, vthreads, target_.max_vthreads);
    }
    if (!use.nested_tag_conflict.empty()) return fmt::format("kernel {}: {}", kernel, use.nested_tag_conflict);
    if (use.widest_vector_bytes > target_.max_vector_bytes) {
      return fmt::format("kernel {}: vectorized loop {} accesses {} bytes at once, above the limit {}", kernel,
                         use.widest_vector_loop, use.widest_vector_bytes, target_.max_vector_bytes);
    }
    int64_t shared = shared_bytes(use);
    if (shared > target_.max_shared_memory_per_block) {
      return fmt::format("kernel {}: {} bytes of shared memory, above the limit {}", kernel, shared,
                         target_.max_shared_memory_per_block);
    }
    if (use.widest_wgmma_n > 0) {
      // A wgmma accumulator lives in registers, a 64 x N tile over a warpgroup's 128 lanes:
      // N / 2 a thread. Past 255 a thread spills it, and a block whose threads need more
      // than the register file cannot launch. (The count of register arrays below holds it
      // too, with mma.sync fragments and local arrays; this one also bounds the block.)
      const int64_t registers = use.widest_wgmma_n / 2 + kRegisterOverhead;
      if (registers > kMaxRegistersPerThread || registers * threads > kRegistersPerBlock) {
        return fmt::format("kernel {}: about {} registers per thread for {} threads (a wgmma accumulator "
                           "and {} more), above the limits {} per thread and {} per block",
                           kernel, registers, threads, kRegisterOverhead, kMaxRegistersPerThread,
                           kRegistersPerBlock);
      }
    }
    // Register arrays past a thread's 255 registers spill to local memory: such a kernel is
    // slow, and it takes seconds to compile (a 256^3 GEMM candidate with 2048 accumulators
    // a thread compiled in 15-20 s; an f16 conv's mma.sync candidate with 392 accumulators
    // and 784 A-fragment halves a lane, 0.6 s, bench_candidate_compile).
    if (const int64_t registers = local_registers_per_thread(use) + kRegisterOverhead;
        registers > kMaxRegistersPerThread) {
      return fmt::format("kernel {}: about {} registers per thread for its register arrays (local, and its lane's "
                         "fragments) and {} more, above the limit {}",
                         kernel, registers, kRegisterOverhead, kMaxRegistersPerThread);
    }
    for (const ir::BlockNode* block : use.blocks) {
      std::optional<int64_t> low = int_annotation(block, kLow), high = int_annotation(block, kHigh);
      if (low && threads < *low) {
        return fmt::format("kernel {}: block {} runs {} threads, below its tiling's bound {}", kernel, block->name,
                           threads, *low);
      }
      if (high && threads > *high) {
        return fmt::format("kernel {}: block {} runs {} threads, above its tiling's bound {}", kernel, block->name,
                           threads, *high);
      }
    }
    return std::nullopt;
  }

  lower::Target target_;
  bool lower_;
};

}  // namespace

std::unique_ptr<Postproc> make_verify_gpu_code_postproc(ParamReader& params, const lower::Target& target) {
  bool lower = params.get_bool("lower", false);
  return std::make_unique<VerifyGpuCode>(target, lower);
}

}  // namespace dragon::search
