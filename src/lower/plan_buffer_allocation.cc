// plan_buffer_allocation: moves each buffer a block allocates down to the lowest loop or
// block holding every access to it, so a cache filled per tile lives per tile. Neither
// resizing (compact_buffers) nor GPU placement of shared memory (plan_gpu_allocations).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

using Chain = std::vector<const ir::StmtNode*>;  // enclosing For and BlockRealize nodes, outermost first

struct BufferUses {
  const ir::StmtNode* owner = nullptr;  // the realization of the block that allocates it
  bool accessed = false;
  Chain common;  // the longest chain shared by every access
  std::unordered_set<const ir::StmtNode*> accessing_blocks;
};

// Finds, for every allocated buffer, the chain of loops and blocks common to its accesses.
// An access is placed at the realization of the innermost block around it: a block's
// instances all see the same allocation, so its own loops must stay outside.
class UseCollector : public ir::StmtExprVisitor {
 public:
  std::map<const ir::BufferNode*, BufferUses> uses;
  std::vector<const ir::BufferNode*> order;  // allocation order, for a stable result

 protected:
  void visit_(const ir::ForNode* op) override {
    chain_.push_back(op);
    ir::StmtExprVisitor::visit_(op);
    chain_.pop_back();
  }
  void visit_(const ir::BlockRealizeNode* op) override {
    for (const ir::Expr& v : op->iter_values) visit_expr(v);
    visit_expr(op->predicate);
    chain_.push_back(op);
    size_t saved = innermost_block_;
    innermost_block_ = chain_.size();
    for (const ir::Buffer& b : op->block->alloc_buffers) {
      uses[b.get()].owner = op;
      order.push_back(b.get());
    }
    visit(ir::Stmt(op->block.get()));
    innermost_block_ = saved;
    chain_.pop_back();
  }
  void visit_(const ir::BufferLoadNode* op) override {
    use(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    use(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  void use(const ir::BufferNode* buffer) {
    auto it = uses.find(buffer);
    if (it == uses.end() || innermost_block_ == 0) return;  // a parameter, or an Allocate's
    BufferUses& u = it->second;
    Chain here(chain_.begin(), chain_.begin() + static_cast<std::ptrdiff_t>(innermost_block_));
    if (!u.accessed) {
      u.common = std::move(here);
      u.accessed = true;
    } else {
      size_t n = 0;
      while (n < u.common.size() && n < here.size() && u.common[n] == here[n]) ++n;
      u.common.resize(n);
    }
    u.accessing_blocks.insert(chain_[innermost_block_ - 1]);
  }

  Chain chain_;
  size_t innermost_block_ = 0;  // chain_ prefix length up to the innermost realization
};

// Where a buffer goes: the last node of the common chain, but never a block that
// accesses it itself (its iterations may carry values through the buffer, a scan's
// state): then the nearest block above it. Shared memory may land inside threadIdx
// loops: every thread's iteration then fills what it reads, and compact_buffers sizes it
// for all threads of a block (GPU passes hoist it to the kernel's top).
const ir::StmtNode* placement(const ir::BufferNode* buffer, const BufferUses& u) {
  Chain chain = u.common;
  auto owner_at = std::find(chain.begin(), chain.end(), u.owner);
  DRAGON_CHECK(owner_at != chain.end(), "an access to '{}' lies outside the block allocating it", buffer->name);
  const size_t owner_depth = static_cast<size_t>(owner_at - chain.begin()) + 1;  // chain length up to the owner
  if (chain.size() > owner_depth && u.accessing_blocks.count(chain.back())) {
    chain.pop_back();
    while (chain.size() > owner_depth && chain.back()->kind != ir::NodeKind::BlockRealize) chain.pop_back();
  }
  return chain.size() <= owner_depth ? u.owner : chain.back();
}

std::vector<ir::BufferRegion> without(const std::vector<ir::BufferRegion>& regions,
                                      const std::unordered_set<const ir::BufferNode*>& moved) {
  std::vector<ir::BufferRegion> kept;
  for (const ir::BufferRegion& r : regions) {
    if (!moved.count(r.buffer.get())) kept.push_back(r);
  }
  return kept;
}

class AllocationMover : public ir::StmtMutator {
 public:
  // Buffers leaving each owner, arriving at each loop or block, and the blocks on the
  // way down whose regions must forget them (the buffer is not visible there any more).
  std::unordered_map<const ir::StmtNode*, std::unordered_set<const ir::BufferNode*>> leaving;
  std::unordered_map<const ir::StmtNode*, std::vector<ir::Buffer>> arriving;
  std::unordered_map<const ir::StmtNode*, std::unordered_set<const ir::BufferNode*>> hidden;

 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    auto it = arriving.find(op);
    if (it == arriving.end()) return visited;
    const auto* loop = visited.as<ir::ForNode>();
    ir::Stmt body = loop->body;
    for (auto b = it->second.rbegin(); b != it->second.rend(); ++b) body = ir::AllocateNode::make(*b, body);
    return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->thread_tag,
                             loop->annotations);
  }

  ir::Stmt visit_(const ir::BlockRealizeNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    bool leaves = leaving.count(op), arrives = arriving.count(op), hides = hidden.count(op);
    if (!leaves && !arrives && !hides) return visited;
    const auto* realize = visited.as<ir::BlockRealizeNode>();
    const ir::BlockNode* block = realize->block.get();
    std::vector<ir::Buffer> allocs;
    for (const ir::Buffer& b : block->alloc_buffers) {
      if (!leaves || !leaving[op].count(b.get())) allocs.push_back(b);
    }
    if (arrives) allocs.insert(allocs.end(), arriving[op].begin(), arriving[op].end());
    std::vector<ir::BufferRegion> reads = hides ? without(block->reads, hidden[op]) : block->reads;
    std::vector<ir::BufferRegion> writes = hides ? without(block->writes, hidden[op]) : block->writes;
    ir::Block moved = ir::BlockNode::make(block->name, block->iter_vars, std::move(reads), std::move(writes),
                                          block->body, block->init, std::move(allocs), block->annotations);
    return ir::BlockRealizeNode::make(realize->iter_values, realize->predicate, moved);
  }
};

}  // namespace

ir::PrimFunc plan_buffer_allocation(const ir::PrimFunc& func) {
  UseCollector collector;
  collector.visit(func->body);
  AllocationMover mover;
  for (const ir::BufferNode* buffer : collector.order) {
    const BufferUses& u = collector.uses.at(buffer);
    if (!u.accessed) continue;  // never used: nothing to learn, it stays
    const ir::StmtNode* target = placement(buffer, u);
    if (target == u.owner) continue;
    mover.leaving[u.owner].insert(buffer);
    mover.arriving[target].push_back(ir::Buffer(buffer));
    auto from = std::find(u.common.begin(), u.common.end(), u.owner);
    auto to = std::find(u.common.begin(), u.common.end(), target);
    for (auto it = from + 1; it <= to; ++it) {
      if ((*it)->kind == ir::NodeKind::BlockRealize) mover.hidden[*it].insert(buffer);
    }
  }
  if (mover.leaving.empty()) return func;
  return func.with_body(mover.visit(func->body));
}

}  // namespace dragon::lower
