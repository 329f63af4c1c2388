// compute_inline and reverse_compute_inline: a spatial block whose body is one store is
// folded into the blocks that read its buffer, or a consumer is folded into the single
// producer of what it reads; the intermediate buffer disappears. Not compute_at.
#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct ComputeInlinePlan;
struct ReverseComputeInlinePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Inlines the block into every block that reads its buffer: each load B[idx] becomes
  // the stored value with the store's index variables replaced by idx. The block, its
  // loops left empty and the buffer's allocation disappear; readers' regions are redone.
  // Requires:
  //   1) the block writes exactly one buffer (NotSingleWriteBlock)
  //   2) that buffer is allocated in a block, not a parameter (OutputBlock)
  //   3) the block is complete: spatial iteration variables only, no init, the only
  //      writer of the buffer, not a reader of it (NotCompleteBlock)
  //   4) the body is one store B[v0, v1, ...] = f(...) indexed by distinct iteration
  //      variables, and f uses no other iteration variable (BodyAnalysisError)
  //   5) the block is not the only leaf of its scope (OnlyLeafError)
  //   6) every reader of the buffer is a leaf block after the block that sees every
  //      buffer f reads (UnsupportedConsumer)
  //   7) no block writes a buffer f reads between the block and its readers (loops
  //      shared with them included) (ValueOverwritten).
  void compute_inline(BlockRV block);
  // Inlines the consumer `block`, C[f(v)] = g(B[v], ...), into the single producer of B,
  // B[u] = h(u), which becomes C[f(u)] = g(h(u), ...) (keeping its name); the block, its
  // loops left empty and B's allocation disappear.
  // Requires:
  //   1) the block writes exactly one buffer (NotSingleWriteBlock)
  //   2) the block is complete (NotCompleteBlock)
  //   3) the body is one store and the realization has no predicate (BodyAnalysisError)
  //   4) it reads exactly one buffer that another block writes, and that producer is
  //      complete, writes only it, with a body B[u0, u1, ...] = h indexed by distinct
  //      iteration variables (NonSingleProducer)
  //   5) every load of B is at the same distinct iteration variables, which are the only
  //      ones the body uses, ranging over the producer's domains (BodyAnalysisError)
  //   6) B is allocated, written before the block, accessed by no other block, one
  //      holding the producer or the block included (ProducerHasOtherConsumers)
  //   7) the producer sees what the block reads and writes and does not read C, and no
  //      block between them (loops shared with them included) accesses C or writes what
  //      the block reads (UnsafeToMove)
  //   8) the block is not the only leaf of its scope (OnlyLeafError).
  void reverse_compute_inline(BlockRV block);
  CheckResult check_reverse_compute_inline(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::ComputeInlinePlan> plan_compute_inline(BlockRV block) const;
  detail::Planned<detail::ReverseComputeInlinePlan> plan_reverse_compute_inline(BlockRV block) const;
  // The verdict of compute_inline (kind ComputeInline) or reverse_compute_inline of `block`
  // (compute_inline.cc); also for compute_at's inline location mark.
  CheckResult check_inline(InstructionKind kind, BlockRV block) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

bool is_param(const PrimFunc& func, const BufferNode* buffer) {
  return std::any_of(func->params.begin(), func->params.end(),
                     [&](const Param& p) { return p.buffer.get() == buffer; });
}

// The block that allocates `buffer`, or nullptr.
const BlockNode* allocator_of(const PrimFunc& func, const BufferNode* buffer) {
  for (const BlockRealizeNode* r : detail::all_block_realizes(func)) {
    for (const Buffer& b : r->block->alloc_buffers) {
      if (b.get() == buffer) return r->block.get();
    }
  }
  return nullptr;
}

// The realized blocks of a function in program order (what all_block_realizes finds).
std::vector<const BlockTree::BlockInfo*> realized_blocks(const BlockTree& tree) {
  std::vector<const BlockTree::BlockInfo*> out;
  for (const BlockTree::BlockInfo& info : tree.blocks()) {
    if (info.realize != nullptr) out.push_back(&info);
  }
  return out;
}

// Buffers loaded anywhere in `e`, first load first.
class LoadedBuffers : public ExprVisitor {
 public:
  std::vector<const BufferNode*> buffers;

 protected:
  void visit_(const BufferLoadNode* op) override {
    if (std::find(buffers.begin(), buffers.end(), op->buffer.get()) == buffers.end()) buffers.push_back(op->buffer.get());
    ExprVisitor::visit_(op);
  }
};

std::vector<const BufferNode*> loaded_buffers(const Expr& e) {
  LoadedBuffers finder;
  finder.visit(e);
  return finder.buffers;
}

// Loads of one buffer in an expression.
class LoadCollector : public ExprVisitor {
 public:
  explicit LoadCollector(const BufferNode* buffer) : buffer_(buffer) {}
  std::vector<const BufferLoadNode*> loads;

 protected:
  void visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) loads.push_back(op);
    ExprVisitor::visit_(op);
  }

 private:
  const BufferNode* buffer_;
};

// Buffers visible at `block`: parameters and allocations of the blocks above it.
std::unordered_set<const BufferNode*> visible_buffers(const PrimFunc& func, const BlockTree& tree,
                                                      const BlockNode* block) {
  std::unordered_set<const BufferNode*> out;
  for (const Param& p : func->params) out.insert(p.buffer.get());
  for (const BlockNode* b = tree.find(block)->scope; b != nullptr; b = tree.find(b)->scope) {
    for (const Buffer& buffer : b->alloc_buffers) out.insert(buffer.get());
  }
  return out;
}

// The loops (of any block) enclosing `block`.
std::unordered_set<const StmtNode*> enclosing_loops(const BlockTree& tree, const BlockNode* block) {
  const std::span<const ForNode* const> loops = tree.find(block)->loops;
  return std::unordered_set<const StmtNode*>(loops.begin(), loops.end());
}

bool share_a_loop(const std::unordered_set<const StmtNode*>& a, const std::unordered_set<const StmtNode*>& b) {
  return std::any_of(a.begin(), a.end(), [&](const StmtNode* n) { return b.count(n) > 0; });
}

// The body with one block realization removed, and loops, sequences and conditionals
// left empty by it removed too (undefined when nothing is left).
class RealizeRemover : public StmtMutator {
 public:
  explicit RealizeRemover(const BlockRealizeNode* target) : target_(target) {}
  Stmt run(const Stmt& s) { return visit(s); }

 protected:
  Stmt visit_(const BlockRealizeNode* op) override { return op == target_ ? Stmt() : Stmt(op); }
  Stmt visit_(const ForNode* op) override {
    Stmt body = visit(op->body);
    if (!body.defined()) return Stmt();
    if (body.same_as(op->body)) return Stmt(op);
    return ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, op->annotations);
  }
  Stmt visit_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt out = visit(s);
      changed |= !out.same_as(s);
      if (out.defined()) seq.push_back(out);
    }
    if (!changed) return Stmt(op);
    if (seq.empty()) return Stmt();
    return SeqStmtNode::make(std::move(seq));
  }
  Stmt visit_(const IfThenElseNode* op) override {
    Stmt then_case = visit(op->then_case);
    Stmt else_case = op->else_case.defined() ? visit(op->else_case) : Stmt();
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return Stmt(op);
    if (!then_case.defined() && !else_case.defined()) return Stmt();
    if (!then_case.defined()) return IfThenElseNode::make(!op->condition, else_case);
    return IfThenElseNode::make(op->condition, then_case, else_case);
  }
  Stmt visit_(const BlockNode* op) override { return Stmt(op); }  // blocks are not entered below the target's scope

 private:
  const BlockRealizeNode* target_;
};

// Removes `target` from the body of `scope` (undefined when the scope would be empty).
Stmt remove_realize(const BlockNode* scope, const BlockRealizeNode* target) {
  return RealizeRemover(target).run(scope->body);
}

// `value` with the store's index variables replaced by `indices` (cast to their types).
Expr instantiate(const Expr& value, const std::vector<Expr>& store_indices, const std::vector<Expr>& indices) {
  std::unordered_map<const VarNode*, Expr> subst;
  for (size_t i = 0; i < store_indices.size(); ++i) {
    const auto* var = store_indices[i].as<VarNode>();
    subst[var] = indices[i].dtype() == var->dtype ? indices[i] : cast(var->dtype, indices[i]);
  }
  return detail::substitute_vars(value, subst);
}

// Replaces every load of the inlined buffer by the producer's value at the load's
// indices, drops the buffer's allocation, recomputes the read regions of changed blocks.
class LoadInliner : public StmtExprMutator {
 public:
  LoadInliner(const BufferStoreNode* store) : store_(store) {}

 protected:
  using StmtExprMutator::visit_;
  Expr visit_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::visit_(op);
    const auto* load = e.as<BufferLoadNode>();
    if (!load->buffer.same_as(store_->buffer)) return e;
    return instantiate(store_->value, store_->indices, load->indices);
  }
  Stmt visit_(const BlockNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* block = s.as<BlockNode>();
    std::vector<Buffer> allocs;
    for (const Buffer& b : block->alloc_buffers) {
      if (!b.same_as(store_->buffer)) allocs.push_back(b);
    }
    bool reads_it = detail::has_buffer(op->reads, store_->buffer.get());
    if (s.same_as(Stmt(op)) && allocs.size() == op->alloc_buffers.size()) return s;
    std::vector<BufferRegion> reads = block->reads;
    if (reads_it) reads = detect_block_access_regions(block->body, block->init, allocs).reads;
    return BlockNode::make(block->name, block->iter_vars, std::move(reads), block->writes, block->body, block->init,
                           std::move(allocs), block->annotations);
  }

 private:
  const BufferStoreNode* store_;
};

// Whether `indices` are distinct plain iteration variables of `block`.
bool distinct_iter_vars(const BlockNode* block, const std::vector<Expr>& indices) {
  std::unordered_set<const VarNode*> seen;
  for (const Expr& index : indices) {
    const auto* var = index.as<VarNode>();
    if (var == nullptr || !seen.insert(var).second) return false;
    bool is_iter = std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                               [&](const IterVar& iv) { return iv.var.get() == var; });
    if (!is_iter) return false;
  }
  return true;
}

// Whether `e` uses a variable outside `allowed`.
bool uses_other_vars(const Expr& e, const std::vector<const VarNode*>& allowed, const BlockNode* block) {
  std::vector<const VarNode*> others;
  for (const IterVar& iv : block->iter_vars) {
    if (std::find(allowed.begin(), allowed.end(), iv.var.get()) == allowed.end()) others.push_back(iv.var.get());
  }
  return detail::uses_any_var(e, others);
}

const IterVar* iter_var_of(const BlockNode* block, const VarNode* var) {
  for (const IterVar& iv : block->iter_vars) {
    if (iv.var.get() == var) return &iv;
  }
  return nullptr;
}

// Whether the block is complete in the function: spatial iteration variables only, no
// init, the only writer of each buffer it writes, and no reader of them.
std::string incomplete_reason(const BlockTree& tree, const BlockNode* block) {
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kSpatial) {
      return fmt::format("iteration variable {} is {}, not spatial", iv.var.name(), iter_kind_name(iv.kind));
    }
  }
  if (block->init.defined()) return "the block has an init";
  for (const BufferRegion& w : block->writes) {
    if (detail::has_buffer(block->reads, w.buffer.get())) return fmt::format("the block reads '{}', which it writes", w.buffer->name);
    for (const BlockTree::BlockInfo& info : tree.blocks()) {
      const BlockNode* other = info.block;
      if (info.realize != nullptr && other != block && info.leaf && detail::has_buffer(other->writes, w.buffer.get())) {
        return fmt::format("block '{}' also writes '{}'", other->name, w.buffer->name);
      }
    }
  }
  return {};
}

}  // namespace

// What compute_inline's construction needs: the store inlined and the scope without the
// block.
struct detail::ComputeInlinePlan {
  const BufferStoreNode* store = nullptr;
  const BlockNode* scope = nullptr;
  Stmt scope_body;
};

detail::Planned<detail::ComputeInlinePlan> Schedule::plan_compute_inline(BlockRV block_rv) const {
  constexpr InstructionKind kKind = InstructionKind::ComputeInline;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  const BlockNode* block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  const BlockTree::BlockInfo& info = *tree_->find(block);
  if (block->writes.size() != 1) {
    return error(
        kKind, 1, "NotSingleWriteBlock", operand,
        [&] { return fmt::format("the block writes {} buffers, not one", block->writes.size()); }, here);
  }
  const Buffer& buffer = block->writes[0].buffer;
  const std::vector<const BlockTree::BlockInfo*> order = realized_blocks(*tree_);
  const bool allocated = std::any_of(order.begin(), order.end(), [&](const BlockTree::BlockInfo* b) {
    return std::any_of(b->block->alloc_buffers.begin(), b->block->alloc_buffers.end(),
                       [&](const Buffer& a) { return a.same_as(buffer); });
  });
  if (is_param(func_, buffer.get()) || !allocated) {
    return error(
        kKind, 2, "OutputBlock", operand,
        [&] { return fmt::format("the block writes '{}', a parameter of the function", buffer->name); }, here);
  }
  if (std::string why = incomplete_reason(*tree_, block); !why.empty()) {
    return error(kKind, 3, "NotCompleteBlock", operand, why, here);
  }
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr || !store->buffer.same_as(buffer) || !distinct_iter_vars(block, store->indices)) {
    return error(kKind, 4, "BodyAnalysisError", operand,
                 "the body is not one store B[v0, v1, ...] = f(...) indexed by distinct iteration variables", here);
  }
  std::vector<const VarNode*> index_vars;
  for (const Expr& index : store->indices) index_vars.push_back(index.as<VarNode>());
  if (uses_other_vars(store->value, index_vars, block)) {
    return error(kKind, 4, "BodyAnalysisError", operand,
                 "the stored value uses an iteration variable that is not a store index", here);
  }
  detail::ComputeInlinePlan plan;
  plan.store = store;
  plan.scope = info.scope;
  plan.scope_body = remove_realize(info.scope, info.realize);
  if (!plan.scope_body.defined()) {
    return error(
        kKind, 5, "OnlyLeafError", operand,
        [&] { return fmt::format("the block is the only leaf of block '{}'", info.scope->name); }, here);
  }
  // Readers, in program order; the value's buffers must be visible to each of them.
  std::vector<const BufferNode*> value_buffers = loaded_buffers(store->value);
  size_t self = 0;
  while (order[self]->block != block) ++self;
  size_t last_reader = self;
  std::vector<const BlockNode*> readers;
  for (size_t i = 0; i < order.size(); ++i) {
    const BlockNode* b = order[i]->block;
    if (b == block || !(detail::has_buffer(b->reads, buffer.get()) || detail::has_buffer(b->writes, buffer.get()))) continue;
    if (!order[i]->leaf) {
      return error(
          kKind, 6, "UnsupportedConsumer", operand,
          [&] { return fmt::format("block '{}' accesses '{}' and has blocks inside it", b->name, buffer->name); },
          ErrorLocus{nullptr, b->name});
    }
    std::unordered_set<const BufferNode*> visible = visible_buffers(func_, *tree_, b);
    for (const BufferNode* v : value_buffers) {
      if (!visible.count(v)) {
        return error(
            kKind, 6, "UnsupportedConsumer", operand,
            [&] { return fmt::format("block '{}' does not see buffer '{}', which the value reads", b->name, v->name); },
            ErrorLocus{nullptr, b->name});
      }
    }
    if (i < self) {
      return error(
          kKind, 6, "UnsupportedConsumer", operand,
          [&] { return fmt::format("block '{}' reads '{}' before the block writes it", b->name, buffer->name); },
          ErrorLocus{nullptr, b->name});
    }
    readers.push_back(b);
    last_reader = i;
  }
  // The value must read the same data where it is inlined as where it was computed.
  std::unordered_set<const StmtNode*> own_loops = enclosing_loops(*tree_, block);
  std::unordered_set<const StmtNode*> reader_loops;
  for (const BlockNode* r : readers) {
    for (const StmtNode* l : enclosing_loops(*tree_, r)) reader_loops.insert(l);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const BlockNode* w = order[i]->block;
    if (w == block || !order[i]->leaf) continue;
    bool writes_input = std::any_of(value_buffers.begin(), value_buffers.end(),
                                    [&](const BufferNode* v) { return detail::has_buffer(w->writes, v); });
    if (!writes_input) continue;
    std::unordered_set<const StmtNode*> loops = enclosing_loops(*tree_, w);
    bool unsafe = i < self ? share_a_loop(loops, own_loops)
                           : (i <= last_reader || share_a_loop(loops, reader_loops));
    if (unsafe) {
      return error(
          kKind, 7, "ValueOverwritten", operand,
          [&] {
            return fmt::format("block '{}' writes a buffer the value reads between the block and its readers", w->name);
          },
          ErrorLocus{nullptr, w->name});
    }
  }
  return plan;
}

void Schedule::compute_inline(BlockRV block_rv) {
  constexpr InstructionKind kKind = InstructionKind::ComputeInline;
  const detail::ComputeInlinePlan plan = plan_compute_inline(block_rv).take();
  const BlockNode* scope = plan.scope;
  Block new_scope = BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes, plan.scope_body,
                                    scope->init, scope->alloc_buffers, scope->annotations);
  PrimFunc removed = detail::replace_in_func(func_, scope, new_scope);
  LoadInliner inliner(plan.store);
  PrimFunc result = removed.with_body(inliner.visit(removed->body));

  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv));
}

// What reverse_compute_inline's construction needs: the consumer's store, its producer
// (whose store it takes) and the input buffer between them, and the scope without the
// block.
struct detail::ReverseComputeInlinePlan {
  const BufferStoreNode* store = nullptr;
  const BlockNode* producer = nullptr;
  const BufferStoreNode* producer_store = nullptr;
  const BufferNode* input = nullptr;
  std::vector<const VarNode*> vars;  // the consumer's variables its loads of `input` use
  const BlockNode* scope = nullptr;
  Stmt scope_body;
};

detail::Planned<detail::ReverseComputeInlinePlan> Schedule::plan_reverse_compute_inline(BlockRV block_rv) const {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeInline;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  const BlockNode* block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  const BlockTree::BlockInfo& info = *tree_->find(block);
  const BlockRealizeNode* realize = info.realize;
  if (block->writes.size() != 1) {
    return error(
        kKind, 1, "NotSingleWriteBlock", operand,
        [&] { return fmt::format("the block writes {} buffers, not one", block->writes.size()); }, here);
  }
  if (std::string why = incomplete_reason(*tree_, block); !why.empty()) {
    return error(kKind, 2, "NotCompleteBlock", operand, why, here);
  }
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr || !store->buffer.same_as(block->writes[0].buffer) ||
      (realize->predicate.defined() && !is_const_int(realize->predicate, 1))) {
    return error(kKind, 3, "BodyAnalysisError", operand,
                 "the body is not one store C[f(v)] = g(...) of an unpredicated block", here);
  }
  // The one buffer the block reads that some block writes, and its producer.
  const std::vector<const BlockTree::BlockInfo*> order = realized_blocks(*tree_);
  const BufferNode* input = nullptr;
  for (const BufferRegion& r : block->reads) {
    bool produced = std::any_of(order.begin(), order.end(), [&](const BlockTree::BlockInfo* b) {
      return b->block != block && b->leaf && detail::has_buffer(b->block->writes, r.buffer.get());
    });
    if (!produced || r.buffer.get() == input) continue;
    if (input != nullptr) {
      return error(
          kKind, 4, "NonSingleProducer", operand,
          [&] {
            return fmt::format("the block reads two produced buffers, '{}' and '{}'", input->name, r.buffer->name);
          },
          here);
    }
    input = r.buffer.get();
  }
  if (input == nullptr)
    return error(kKind, 4, "NonSingleProducer", operand, "the block reads no produced buffer", here);
  const BlockNode* producer = nullptr;
  for (const BlockTree::BlockInfo* b : order) {
    if (b->block != block && b->leaf && detail::has_buffer(b->block->writes, input)) producer = b->block;
  }
  const auto* producer_store = producer->body.as<BufferStoreNode>();
  if (std::string why = incomplete_reason(*tree_, producer);
      !why.empty() || producer->writes.size() != 1 || producer_store == nullptr ||
      producer_store->buffer.get() != input || !distinct_iter_vars(producer, producer_store->indices)) {
    return error(
        kKind, 4, "NonSingleProducer", operand,
        [&] {
          return fmt::format("producer '{}' is not a complete block whose body is one store indexed by its variables",
                             producer->name);
        },
        ErrorLocus{nullptr, producer->name});
  }
  // Every load of the input: the same distinct variables, the producer's domains.
  LoadCollector loads(input);
  loads.visit(store->value);
  for (const Expr& index : store->indices) loads.visit(index);
  if (loads.loads.empty()) {
    return error(
        kKind, 5, "BodyAnalysisError", operand, [&] { return fmt::format("the body does not load '{}'", input->name); },
        here);
  }
  const std::vector<Expr>& load_indices = loads.loads.front()->indices;
  std::vector<const VarNode*> vars;
  for (const Expr& e : load_indices) vars.push_back(e.as<VarNode>());
  bool same_loads = distinct_iter_vars(block, load_indices) &&
                    std::all_of(loads.loads.begin(), loads.loads.end(), [&](const BufferLoadNode* l) {
                      if (l->indices.size() != vars.size()) return false;
                      for (size_t d = 0; d < l->indices.size(); ++d) {
                        if (!l->indices[d].same_as(load_indices[d]) && l->indices[d].as<VarNode>() != vars[d]) {
                          return false;
                        }
                      }
                      return true;
                    });
  bool other_vars = false;
  for (const Expr& index : store->indices) other_vars |= uses_other_vars(index, vars, block);
  other_vars |= same_loads && uses_other_vars(store->value, vars, block);
  if (!same_loads || other_vars) {
    return error(
        kKind, 5, "BodyAnalysisError", operand,
        [&] {
          return fmt::format(
              "the loads of '{}' are not all at the same distinct iteration variables, which the body "
              "must use alone",
              input->name);
        },
        here);
  }
  for (size_t d = 0; d < vars.size(); ++d) {
    const IterVar* mine = iter_var_of(block, vars[d]);
    const IterVar* theirs = iter_var_of(producer, producer_store->indices[d].as<VarNode>());
    auto a0 = as_const_int(mine->dom.min), a1 = as_const_int(mine->dom.extent);
    auto b0 = as_const_int(theirs->dom.min), b1 = as_const_int(theirs->dom.extent);
    if (!a0 || !a1 || a0 != b0 || a1 != b1) {
      return error(
          kKind, 5, "BodyAnalysisError", operand,
          [&] {
            return fmt::format("variable {} ranges over {} +: {}, the producer's {} over {} +: {}", mine->var.name(),
                               print_expr(mine->dom.min), print_expr(mine->dom.extent), theirs->var.name(),
                               print_expr(theirs->dom.min), print_expr(theirs->dom.extent));
          },
          here);
    }
  }
  const BufferNode* output = store->buffer.get();
  size_t self = 0, producer_at = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i]->block == block) self = i;
    if (order[i]->block == producer) producer_at = i;
  }
  // Blocks holding others count too: a block around the producer or the block (one that
  // blockize made) declares B in its regions, which would name a buffer that is gone; the
  // producer is then not in the block's scope.
  for (size_t i = 0; i < order.size(); ++i) {
    const BlockNode* b = order[i]->block;
    if (b == block || b == producer) continue;
    if (detail::has_buffer(b->reads, input) || detail::has_buffer(b->writes, input)) {
      return error(
          kKind, 6, "ProducerHasOtherConsumers", operand,
          [&] {
            return fmt::format("block '{}'{} also accesses '{}'", b->name,
                               order[i]->leaf ? "" : ", which holds other blocks,", input->name);
          },
          ErrorLocus{nullptr, b->name});
    }
  }
  if (is_param(func_, input) || producer_at > self) {
    return error(
        kKind, 6, "ProducerHasOtherConsumers", operand,
        [&] { return fmt::format("'{}' is a parameter of the function or written after the block", input->name); },
        here);
  }
  std::vector<const BufferNode*> consumed = loaded_buffers(store->value);
  for (const Expr& index : store->indices) {
    for (const BufferNode* b : loaded_buffers(index)) consumed.push_back(b);
  }
  std::unordered_set<const BufferNode*> visible = visible_buffers(func_, *tree_, producer);
  for (const BufferNode* b : consumed) {
    if (b != input && !visible.count(b)) {
      return error(
          kKind, 7, "UnsafeToMove", operand,
          [&] { return fmt::format("the producer does not see buffer '{}'", b->name); }, here);
    }
  }
  if (!visible.count(output) || detail::has_buffer(producer->reads, output)) {
    return error(
        kKind, 7, "UnsafeToMove", operand,
        [&] { return fmt::format("the producer reads or does not see '{}'", store->buffer->name); }, here);
  }
  std::unordered_set<const StmtNode*> producer_loops = enclosing_loops(*tree_, producer);
  std::unordered_set<const StmtNode*> own_loops = enclosing_loops(*tree_, block);
  for (size_t i = 0; i < order.size(); ++i) {
    const BlockNode* b = order[i]->block;
    if (b == block || b == producer || !order[i]->leaf) continue;
    bool conflicts = detail::has_buffer(b->reads, output) || detail::has_buffer(b->writes, output) ||
                     std::any_of(consumed.begin(), consumed.end(),
                                 [&](const BufferNode* c) { return c != input && detail::has_buffer(b->writes, c); });
    if (!conflicts) continue;
    std::unordered_set<const StmtNode*> loops = enclosing_loops(*tree_, b);
    bool between = (i > producer_at && i < self) || (i < producer_at && share_a_loop(loops, producer_loops)) ||
                   (i > self && share_a_loop(loops, own_loops));
    if (between) {
      return error(
          kKind, 7, "UnsafeToMove", operand,
          [&] {
            return fmt::format("block '{}' accesses what the block writes or reads between it and its producer",
                               b->name);
          },
          ErrorLocus{nullptr, b->name});
    }
  }
  detail::ReverseComputeInlinePlan plan{store, producer, producer_store, input, std::move(vars), info.scope, Stmt()};
  plan.scope_body = remove_realize(info.scope, realize);
  if (!plan.scope_body.defined()) {
    return error(
        kKind, 8, "OnlyLeafError", operand,
        [&] { return fmt::format("the block is the only leaf of block '{}'", info.scope->name); }, here);
  }
  return plan;
}

void Schedule::reverse_compute_inline(BlockRV block_rv) {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeInline;
  const detail::ReverseComputeInlinePlan plan = plan_reverse_compute_inline(block_rv).take();
  const BufferStoreNode* store = plan.store;
  const BlockNode* producer = plan.producer;
  const BufferStoreNode* producer_store = plan.producer_store;
  const BufferNode* input = plan.input;
  const std::vector<const VarNode*>& vars = plan.vars;
  const BlockNode* scope = plan.scope;
  // The producer now stores the consumer's value: C[f(u)] = g(h(u), ...).
  std::unordered_map<const VarNode*, Expr> to_producer;
  for (size_t d = 0; d < vars.size(); ++d) {
    const Expr& u = producer_store->indices[d];
    to_producer[vars[d]] = u.dtype() == vars[d]->dtype ? u : cast(vars[d]->dtype, u);
  }
  class InputReplacer : public ExprMutator {
   public:
    InputReplacer(const BufferNode* input, Expr value) : input_(input), value_(std::move(value)) {}
    Expr run(const Expr& e) { return visit(e); }

   protected:
    using ExprMutator::visit_;
    Expr visit_(const BufferLoadNode* op) override {
      return op->buffer.get() == input_ ? value_ : ExprMutator::visit_(op);
    }

   private:
    const BufferNode* input_;
    Expr value_;
  };
  InputReplacer replacer(input, producer_store->value);
  Expr value = replacer.run(detail::substitute_vars(store->value, to_producer));
  std::vector<Expr> indices;
  Analyzer analyzer;
  for (const IterVar& iv : producer->iter_vars) analyzer.bind(iv.var, iv.dom);
  for (const Expr& index : store->indices) {
    indices.push_back(analyzer.simplify(replacer.run(detail::substitute_vars(index, to_producer))));
  }
  Stmt new_body = BufferStoreNode::make(store->buffer, value, std::move(indices));
  BlockAccessRegions regions = detect_block_access_regions(new_body, Stmt(), producer->alloc_buffers);
  Stmt new_producer = BlockNode::make(producer->name, producer->iter_vars, regions.reads, regions.writes, new_body,
                                      Stmt(), producer->alloc_buffers, producer->annotations);
  Stmt new_scope = BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes, plan.scope_body,
                                   scope->init, scope->alloc_buffers, scope->annotations);
  PrimFunc result = detail::replace_in_func(func_, scope, new_scope);
  result = detail::replace_in_func(result, detail::find_block_realize(result, producer->name)->block.get(),
                                   new_producer);
  // The input buffer is gone: drop its allocation.
  const BlockNode* alloc = allocator_of(result, input);
  if (alloc != nullptr) {
    std::vector<Buffer> allocs;
    for (const Buffer& b : alloc->alloc_buffers) {
      if (b.get() != input) allocs.push_back(b);
    }
    result = detail::replace_in_func(result, alloc,
                                     BlockNode::make(alloc->name, alloc->iter_vars, alloc->reads, alloc->writes,
                                                     alloc->body, alloc->init, std::move(allocs), alloc->annotations));
  }

  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv));
}

CheckResult Schedule::check_inline(InstructionKind kind, BlockRV block) const {
  return kind == InstructionKind::ComputeInline ? detail::verdict(plan_compute_inline(block), true)
                                                : detail::verdict(plan_reverse_compute_inline(block), true);
}

CheckResult Schedule::check_compute_inline(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  return check_inline(InstructionKind::ComputeInline, *block);
}

CheckResult Schedule::check_reverse_compute_inline(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  return check_inline(InstructionKind::ReverseComputeInline, *block);
}

namespace detail {

constexpr auto kBlockOnlySlots = numbered_slots({slot::input("block", ValueType::kBlock)});

constinit const InstructionSignature kComputeInlineSignature{
    .python_name = "compute_inline",
    .slots = kBlockOnlySlots,
    .replay = replay_method<&Schedule::compute_inline>,
    .check = check_method<&Schedule::check_compute_inline>,
};

constinit const InstructionSignature kReverseComputeInlineSignature{
    .python_name = "reverse_compute_inline",
    .slots = kBlockOnlySlots,
    .replay = replay_method<&Schedule::reverse_compute_inline>,
    .check = check_method<&Schedule::check_reverse_compute_inline>,
};

}  // namespace detail
}  // namespace dragon::schedule
