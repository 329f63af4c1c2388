// Tensor-core blocks on CUDA: a unit loop annotated "tensor_intrin" = NAME (lower.h keeps
// the annotation) is planned by the row NAME of warp_intrin_planners() (cuda_mma.cc: the
// mma.sync family; cuda_wgmma.cc: the wgmma family) and printed as one warp-wide (or
// warpgroup-wide) helper call instead of its scalar loops.
//
// Warp mode, per kernel: the kernel gets threadIdx.x = its L lanes, L = 32 for mma.sync
// blocks (its other threads are whole warps along threadIdx.y/z) and L = 128 for wgmma
// blocks (a warpgroup: 4 warps; the other threads are whole warpgroups, so each starts at
// a warp index divisible by 4); the two families do not mix in a kernel. Fragments ("warp"
// scope) are declared per lane (FragmentLayout), every tensorized block runs on all L
// lanes, and so does code that reads threadIdx.x (a kernel may bind it with extent L
// only: the lanes, as cooperative copies do). All other code runs on lane 0 only followed
// by a barrier of the L lanes (__syncwarp, or the warpgroup's named barrier): it does not
// depend on the lane, so one lane computes what the L would, and its writes are visible to
// the lanes' next tensor-core instruction. Barriers and loops around tensorized blocks run
// on every lane (their control flow cannot depend on the lane unless it reads threadIdx.x,
// and then it runs on every lane anyway).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuda_emitter.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

namespace dragon::codegen {
namespace {

const std::string* tensor_intrin_of(const ir::ForNode* op) {
  auto it = op->annotations.find("tensor_intrin");
  return it == op->annotations.end() ? nullptr : std::get_if<std::string>(&it->second);
}

// The tensorized blocks of a kernel with the enclosing loops' ranges, and the accesses to
// "warp" buffers made outside them.
class WarpBlockScan final : public ir::StmtExprVisitor {
 public:
  struct Block {
    const ir::ForNode* unit;
    std::string intrin;
    ir::Analyzer analyzer;  // ranges of the loops around it
  };
  std::vector<Block> blocks;
  std::vector<std::string> stray_fragment_accesses;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    if (const std::string* intrin = tensor_intrin_of(op)) {
      blocks.push_back({op, *intrin, analyzer_});
      return;
    }
    auto min = ir::as_const_int(op->min);
    auto extent = ir::as_const_int(op->extent);
    if (min && extent) analyzer_.bind(op->loop_var, *min, *extent);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (op->buffer->scope == "warp") stray_fragment_accesses.push_back("a store to " + op->buffer->name);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    if (op->buffer->scope == "warp") stray_fragment_accesses.push_back("a load of " + op->buffer->name);
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  ir::Analyzer analyzer_;
};

// Whether a statement holds a planned warp block or a barrier, or reads the lane.
class AllLanesScan final : public ir::StmtExprVisitor {
 public:
  AllLanesScan(const std::unordered_map<const ir::ForNode*, WarpCall>& calls, const ir::VarNode* lane_var)
      : calls_(calls), lane_var_(lane_var) {}
  bool found = false;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    if (calls_.count(op) != 0) {
      found = true;
      return;
    }
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::EvaluateNode* op) override {
    // Barriers and cp.async groups are per thread: every lane takes part.
    if (const auto* call = op->value.as<ir::CallNode>(); call && ir::intrinsic_is_effect(call->op)) found = true;
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::VarNode* op) override { found = found || (lane_var_ != nullptr && op == lane_var_); }

 private:
  const std::unordered_map<const ir::ForNode*, WarpCall>& calls_;
  const ir::VarNode* lane_var_;
};

// The variable of the kernel's threadIdx.x launch loop, if it binds threadIdx.x.
const ir::VarNode* thread_x_var(const ir::Stmt& root) {
  struct Find : ir::StmtVisitor {
    const ir::VarNode* var = nullptr;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (op->for_kind == ir::ForKind::kThreadBinding && op->thread_tag == "threadIdx.x") var = op->loop_var.get();
      if (var == nullptr) ir::StmtVisitor::visit_(op);
    }
  } find;
  find.visit(root);
  return find.var;
}

// Adds the variables `e` reads to `vars`.
void collect_vars(const ir::Expr& e, std::unordered_set<const ir::VarNode*>& vars) {
  struct Scan : ir::StmtExprVisitor {
    std::unordered_set<const ir::VarNode*>* vars;
    using ir::StmtExprVisitor::visit_;
    void visit_(const ir::VarNode* op) override { vars->insert(op); }
  } scan;
  scan.vars = &vars;
  scan.visit(e);
}

// The "local" buffers a statement reads.
std::vector<const ir::BufferNode*> local_reads(const ir::Stmt& s) {
  struct Scan : ir::StmtExprVisitor {
    std::vector<const ir::BufferNode*> buffers;
    using ir::StmtExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      if (op->buffer->scope == "local") buffers.push_back(op->buffer.get());
      ir::StmtExprVisitor::visit_(op);
    }
  } scan;
  scan.visit(s);
  return scan.buffers;
}

}  // namespace

void CudaEmitter::plan_warp_blocks(const ir::Stmt& root, const std::string& kernel,
                                   const std::map<std::string, int64_t>& extents) {
  warp_mode_ = false;
  lanes_ = 32;
  lane_var_ = nullptr;
  warp_calls_.clear();
  fragments_.clear();
  swizzled_.clear();
  fragment_index_vars_.clear();
  scalar_reason_.clear();
  WarpBlockScan scan;
  scan.visit(root);
  if (scan.blocks.empty()) return;
  const auto& planners = warp_intrin_planners();
  for (const WarpBlockScan::Block& block : scan.blocks) {
    if (planners.count(block.intrin) == 0) {
      scalar_reason_ = fmt::format("no warp-level printer for tensor_intrin {} in this kernel", block.intrin);
      return;
    }
  }
  auto refuse = [&](const std::string& why) {
    throw UserError(fmt::format("CUDA codegen: kernel {} has tensor-core blocks, but {}", kernel, why));
  };
  // wgmma blocks run on a warpgroup's 128 lanes, mma.sync blocks on a warp's 32.
  auto lanes_of = [](const std::string& intrin) -> int64_t { return intrin.rfind("wgmma_", 0) == 0 ? 128 : 32; };
  lanes_ = lanes_of(scan.blocks.front().intrin);
  for (const WarpBlockScan::Block& block : scan.blocks) {
    if (lanes_of(block.intrin) != lanes_) {
      refuse(fmt::format("it mixes warpgroup (wgmma) blocks and warp (mma.sync) blocks ({} and {}); one kernel runs "
                         "one of the two families",
                         scan.blocks.front().intrin, block.intrin));
    }
  }
  const char* group = lanes_ == 32 ? "warp" : "warpgroup";
  if (auto x = extents.find("threadIdx.x"); x != extents.end() && x->second != lanes_) {
    refuse(fmt::format("it binds threadIdx.x to {}: {}-level blocks need threadIdx.x for the {}'s {} lanes (bind "
                       "{}s to threadIdx.y; only cooperative code may bind threadIdx.x, with extent {})",
                       x->second, group, group, lanes_, group, lanes_));
  }
  int64_t threads = lanes_;
  for (const char* tag : {"threadIdx.y", "threadIdx.z"}) {
    if (auto it = extents.find(tag); it != extents.end()) threads *= it->second;
  }
  if (threads > 1024) refuse(fmt::format("its {}s need {} threads per block, more than 1024", group, threads));
  if (!scan.stray_fragment_accesses.empty()) {
    refuse(fmt::format("{} is outside any tensorized block (a fragment is spread over the lanes; only warp-level "
                       "blocks may access it)",
                       scan.stray_fragment_accesses.front()));
  }
  for (const WarpBlockScan::Block& block : scan.blocks) {
    std::optional<TileNest> nest = read_tile_nest(block.unit);
    if (!nest) refuse(fmt::format("its {} block is not a chain of constant loops down to one store", block.intrin));
    WarpPlanContext context{block.analyzer, fragments_, swizzled_};
    std::string why;
    std::optional<WarpCall> call = planners.find(block.intrin)->second(*nest, context, why);
    if (!call) refuse(fmt::format("its {} block does not fit the instruction: {}", block.intrin, why));
    DRAGON_CHECK(call->lanes == lanes_, "planner of {} returned a call over {} lanes, the kernel has {}", block.intrin,
                 call->lanes, lanes_);
    for (const WarpHelperArg& arg : call->args) {
      if (arg.buffer.defined() && arg.buffer->scope == "warp") collect_vars(arg.offset, fragment_index_vars_);
    }
    warp_calls_.emplace(block.unit, std::move(*call));
  }
  split_fragments_ = prepare_tf32_fragments_once(warp_calls_);
  for (const auto& [unit, call] : warp_calls_) used_helpers_.insert(call.helper);
  warp_mode_ = true;
  lane_name_ = names_.fresh("dragon_lane");
  lane_var_ = thread_x_var(root);
}

bool CudaEmitter::print_tensor_intrin(const ir::ForNode* op, const std::string& intrin) {
  auto it = warp_calls_.find(op);
  if (!warp_mode_ || it == warp_calls_.end()) return false;
  std::vector<std::string> args;
  for (const WarpHelperArg& arg : it->second.args) {
    std::string offset = print_expr(arg.offset);
    args.push_back(arg.buffer.defined() ? fmt::format("{} + {}", buffer_name(arg.buffer), offset) : offset);
  }
  args.push_back(lane_name_);
  line(fmt::format("{}({});  // tensor_intrin {}", it->second.helper, fmt::join(args, ", "), intrin));
  if (it->second.writes_memory) line(lanes_sync());
  return true;
}

std::string CudaEmitter::lanes_sync() const {
  return lanes_ == 32 ? "__syncwarp();" : "dragon_warpgroup_sync();";
}

std::string CudaEmitter::loop_pragma(const ir::ForNode* op) const {
  // Fragment slots are indexed by the loops around warp blocks; unrolled, they are
  // constants and the fragments stay in registers instead of local memory.
  constexpr int64_t kMaxUnrolledTiles = 64;
  auto extent = ir::as_const_int(op->extent);
  if (!warp_mode_ || !extent || *extent > kMaxUnrolledTiles || !needs_all_lanes(op->body)) return {};
  if (fragment_index_vars_.count(op->loop_var.get()) != 0) return "#pragma unroll";
  // The other loops over the lanes (a cooperative fetch, a k-step and its inner steps)
  // unroll too, so that their loads are in flight together and their indices fold: kept as
  // loops, a ResNet conv's expert kernel ran 0.139 ms against 0.081 (the H100,
  // scripts/device-bench-ab.sh). But only within lowering's unroll budget: a k-step loop
  // unrolled copies the whole step, its fetch included. NVRTC took 4-5 s (against 0.4) over
  // an f16 conv's mma.sync candidate whose 4 k-steps each fetch 180 guarded im2col
  // elements, and 4.2 s over an f32 GEMM's whose unrolled k-steps held 416 3xTF32 calls
  // (bench_candidate_compile). Warpgroup
  // mode unrolls the fragment-indexing loops only, as measured with the wgmma scripts.
  if (lanes_ == 128 || !lower::unroll_budget_fits(lower::unrolled_size(ir::Stmt(op)))) return {};
  return "#pragma unroll";
}

bool CudaEmitter::needs_all_lanes(const ir::Stmt& s) const {
  AllLanesScan scan(warp_calls_, lane_var_);
  scan.visit(s);
  if (scan.found && lane_var_ != nullptr) {
    // Lane-0 code fills "local" buffers on lane 0 only: code spread over the lanes must
    // not read them (the other lanes' copies were never written).
    AllLanesScan lane_only(warp_calls_, nullptr);
    lane_only.visit(s);
    std::vector<const ir::BufferNode*> reads = local_reads(s);
    if (!lane_only.found && !reads.empty()) {
      throw UserError(fmt::format("CUDA codegen: code spread over the warp's lanes (it reads threadIdx.x) reads the "
                                  "local buffer {}, which lane-0 code writes; keep per-thread values out of "
                                  "cooperative code in a kernel with tensor-core blocks",
                                  reads.front()->name));
    }
  }
  return scan.found;
}

void CudaEmitter::print_lane_stmts(const std::vector<ir::Stmt>& stmts) {
  size_t i = 0;
  while (i < stmts.size()) {
    if (needs_all_lanes(stmts[i])) {
      print_stmt(stmts[i++]);
      continue;
    }
    // A run of lane-0 statements shares one guard and one __syncwarp.
    open(fmt::format("if ({} == 0)", lane_name_));
    while (i < stmts.size() && !needs_all_lanes(stmts[i])) print_stmt(stmts[i++]);
    close();
    line(lanes_sync());
  }
}

void CudaEmitter::visit_(const ir::SeqStmtNode* op) {
  if (!warp_mode_) {
    CPrinter::visit_(op);
    return;
  }
  print_lane_stmts(op->seq);
}

void CudaEmitter::visit_(const ir::IfThenElseNode* op) {
  if (!warp_mode_) {
    CPrinter::visit_(op);
    return;
  }
  const bool hoisted = hoist_guarded_indices(op);
  open(fmt::format("if ({})", print_expr(op->condition)));
  print_lane_stmts({op->then_case});
  if (op->else_case.defined()) {
    --indent_;
    open("} else");
    print_lane_stmts({op->else_case});
  }
  close();
  if (hoisted) end_hoisted_indices();
}

}  // namespace dragon::codegen
