// reindex: a copy of one buffer a block accesses into a fresh buffer indexed by the
// block's own iteration variables (those the access uses, in block order), made by a new
// block beside the block's loop nest; the block then accesses the copy at its iteration
// variables directly. A conv's X_pad[n, rc, oh*s + kh*d, ow*s + kw*d] becomes
// X_pad_reindex[n, oh, ow, rc, kh, kw]: trivial, unit-stride indices that a block layout
// transform (transform_block_layout.cc) can then fuse into a GEMM's [m, k].
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct ReIndexPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Copies buffer `reads[buffer_index]` (kRead) or `writes[buffer_index]` (kWrite) of the
  // block through a new buffer <buffer>_reindex (made unique; same dtype and scope,
  // allocated in the block's scope block) whose dimensions are the block's iteration
  // variables that the access uses, in the block's order, each its domain's extent. A
  // new block of that name, with its own loop nest, copies the buffer into it right
  // before the block's statement in the scope (kRead), or copies it back right after
  // (kWrite); every access of the buffer in the block becomes <buffer>_reindex[v - min,
  // ...]. Returns the new block. Recorded as TVM does: ReIndex(block | buffer_index,
  // 0 read / 1 write).
  // Requires:
  //   1) the index is one of the block's reads or writes (IndexOutOfRange)
  //   2) the block is a leaf block under a scope block (NotLeafBlock)
  //   3) every load and store of the buffer in the block uses the same indices, and they
  //      use only the block's iteration variables (InconsistentAccess)
  //   4) the indices stay inside the buffer over the block's domain (the copy accesses
  //      every point of it); kRead: the block does not write the buffer; kWrite: each
  //      index is a distinct iteration variable, the realization has no predicate, no
  //      store of the buffer is under a condition, and the block reads the buffer only
  //      after its init wrote it (UnsupportedAccess)
  //   5) no other block in the block's statement of the scope writes (kRead) or accesses
  //      (kWrite) the buffer (SharedLoopNest).
  BlockRV reindex(BlockRV block, int64_t buffer_index, BufferIndexType buffer_index_type);
  CheckResult check_reindex(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::ReIndexPlan> plan_reindex(BlockRV block, std::optional<int64_t> buffer_index,
                                                    std::optional<BufferIndexType> buffer_index_type) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

// What reindex's construction needs.
struct detail::ReIndexPlan {
  const BlockNode* block = nullptr;
  const BlockNode* scope = nullptr;
  Buffer buffer;
  bool is_read = true;
  std::vector<Expr> indices;  // the one access pattern of the buffer in the block
  std::vector<size_t> used;   // the iteration variables it uses, by position, in order
  size_t at = 0;              // the block's statement in the scope's body
};

namespace {

// Every index list the block's loads and stores of `buffer` use, how many are loads, and
// whether some store runs only under a condition (an if, or a select's branch).
struct AccessScan : public StmtExprVisitor {
  explicit AccessScan(const BufferNode* buffer) : buffer_(buffer) {}
  std::vector<std::vector<Expr>> accesses;
  size_t loads = 0;
  bool conditional_store = false;

 protected:
  using StmtExprVisitor::visit_;
  void visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) {
      accesses.push_back(op->indices);
      ++loads;
    }
    StmtExprVisitor::visit_(op);
  }
  void visit_(const BufferStoreNode* op) override {
    if (op->buffer.get() == buffer_) {
      accesses.push_back(op->indices);
      conditional_store |= conditions_ > 0;
    }
    StmtExprVisitor::visit_(op);
  }
  void visit_(const IfThenElseNode* op) override {
    ++conditions_;
    StmtExprVisitor::visit_(op);
    --conditions_;
  }

 private:
  const BufferNode* buffer_;
  int conditions_ = 0;
};

// Every load and store of `old` becomes one of `fresh` at `indices`; regions of `old`
// become the point `indices` of `fresh`.
class AccessRewriter : public StmtExprMutator {
 public:
  AccessRewriter(const Buffer& old, const Buffer& fresh, std::vector<Expr> indices)
      : old_(old), fresh_(fresh), indices_(std::move(indices)) {}

  std::vector<BufferRegion> regions(const std::vector<BufferRegion>& in) const {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : in) {
      if (!r.buffer.same_as(old_)) {
        out.push_back(r);
        continue;
      }
      std::vector<Range> point;
      for (const Expr& i : indices_) point.push_back(Range{i, make_const(i.dtype(), 1)});
      out.push_back(BufferRegion{fresh_, std::move(point)});
    }
    return out;
  }

 protected:
  using StmtExprMutator::visit_;
  Expr visit_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::visit_(op);
    const auto* load = e.as<BufferLoadNode>();
    if (!load->buffer.same_as(old_)) return e;
    return BufferLoadNode::make(fresh_, indices_);
  }
  Stmt visit_(const BufferStoreNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* store = s.as<BufferStoreNode>();
    if (!store->buffer.same_as(old_)) return s;
    return BufferStoreNode::make(fresh_, store->value, indices_);
  }

 private:
  Buffer old_;
  Buffer fresh_;
  std::vector<Expr> indices_;
};

// Whether `e` mentions a variable outside `allowed`.
class ForeignVarFinder : public ExprVisitor {
 public:
  explicit ForeignVarFinder(const std::vector<const VarNode*>& allowed) : allowed_(allowed) {}
  bool found = false;

 protected:
  using ExprVisitor::visit_;
  void visit_(const VarNode* op) override {
    found |= std::find(allowed_.begin(), allowed_.end(), op) == allowed_.end();
  }

 private:
  const std::vector<const VarNode*>& allowed_;
};

bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!structural_equal(a[i], b[i])) return false;
  }
  return true;
}

std::string show_indices(const std::vector<Expr>& indices) {
  std::vector<std::string> parts;
  for (const Expr& e : indices) parts.push_back(print_expr(e));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

}  // namespace

detail::Planned<detail::ReIndexPlan> Schedule::plan_reindex(BlockRV block_rv, std::optional<int64_t> buffer_index,
                                                            std::optional<BufferIndexType> buffer_index_type) const {
  constexpr InstructionKind kKind = InstructionKind::ReIndex;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::ReIndexPlan plan;
  const BlockNode* block = plan.block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  if (!buffer_index || !buffer_index_type) return plan;  // every precondition reads the buffer
  const bool is_read = plan.is_read = *buffer_index_type == BufferIndexType::kRead;
  const std::vector<BufferRegion>& accesses = is_read ? block->reads : block->writes;
  if (*buffer_index < 0 || *buffer_index >= static_cast<int64_t>(accesses.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "buffer_index",
        [&] {
          return fmt::format("the index is {}, the block {} {} buffers", *buffer_index, is_read ? "reads" : "writes",
                             accesses.size());
        },
        here);
  }
  const Buffer& buffer = plan.buffer = accesses[*buffer_index].buffer;
  const BlockTree::BlockInfo* info = tree_->find(block);
  if (!info->leaf || info->scope == nullptr) {
    return error(kKind, 2, "NotLeafBlock", operand,
                 info->leaf ? "the block is the root block" : "the block has blocks inside it", here);
  }
  const BlockNode* scope = plan.scope = info->scope;

  AccessScan scan(buffer.get());
  scan.visit(block->body);
  const size_t body_accesses = scan.accesses.size();
  const bool body_loads = scan.loads > 0;
  if (block->init.defined()) scan.visit(block->init);
  const bool init_writes = scan.accesses.size() > body_accesses;
  if (scan.accesses.empty()) {
    return error(
        kKind, 3, "InconsistentAccess", operand,
        [&] { return fmt::format("the block declares '{}' but never loads or stores it", buffer->name); }, here);
  }
  for (const std::vector<Expr>& a : scan.accesses) {
    if (!same_indices(a, scan.accesses.front())) {
      return error(
          kKind, 3, "InconsistentAccess", operand,
          [&] {
            return fmt::format("the block accesses '{}' at {} and at {}", buffer->name,
                               show_indices(scan.accesses.front()), show_indices(a));
          },
          here);
    }
  }
  plan.indices = scan.accesses.front();
  std::vector<const VarNode*> iter_vars;
  for (const IterVar& iv : block->iter_vars) iter_vars.push_back(iv.var.get());
  for (const Expr& index : plan.indices) {
    ForeignVarFinder foreign(iter_vars);
    foreign.visit(index);
    if (foreign.found) {
      return error(
          kKind, 3, "InconsistentAccess", operand,
          [&] {
            return fmt::format("index {} of '{}' uses a variable other than the block's iteration variables",
                               print_expr(index), buffer->name);
          },
          here);
    }
  }
  for (size_t p = 0; p < iter_vars.size(); ++p) {
    if (std::any_of(plan.indices.begin(), plan.indices.end(),
                    [&](const Expr& e) { return detail::uses_any_var(e, {iter_vars[p]}); })) {
      plan.used.push_back(p);
    }
  }

  // The copy accesses every point of the variables' domains, also those where the block
  // would not (a load guarded by a select, as an inlined pad has): each index must stay
  // inside the buffer there.
  Analyzer domains;
  for (const IterVar& iv : block->iter_vars) domains.bind(iv.var, iv.dom);
  for (size_t d = 0; d < plan.indices.size(); ++d) {
    const ConstIntBound bound = domains.const_int_bound(plan.indices[d]);
    if (!bound.min || !bound.max || *bound.min < 0 || *bound.max >= buffer->shape[d]) {
      return error(
          kKind, 4, "UnsupportedAccess", operand,
          [&] {
            return fmt::format(
                "index {} of '{}' may leave [0, {}) over the block's domain, where the copy would access it",
                print_expr(plan.indices[d]), buffer->name, buffer->shape[d]);
          },
          here);
    }
  }
  if (is_read && detail::has_buffer(block->writes, buffer.get())) {
    return error(
        kKind, 4, "UnsupportedAccess", operand,
        [&] { return fmt::format("the block also writes '{}': reindex it as a write", buffer->name); }, here);
  }
  if (!is_read) {
    std::vector<const VarNode*> seen;
    for (const Expr& index : plan.indices) {
      const auto* v = index.as<VarNode>();
      if (v == nullptr || std::find(seen.begin(), seen.end(), v) != seen.end()) {
        return error(
            kKind, 4, "UnsupportedAccess", operand,
            [&] {
              return fmt::format("the block writes '{}' at {}: each index must be a distinct iteration variable",
                                 buffer->name, show_indices(plan.indices));
            },
            here);
      }
      seen.push_back(v);
    }
    if (info->realize->predicate.defined() && !is_const_int(info->realize->predicate, 1)) {
      return error(
          kKind, 4, "UnsupportedAccess", operand,
          [&] {
            return fmt::format("the block runs under the predicate {}, so the copy back would write what it never wrote",
                               print_expr(info->realize->predicate));
          },
          here);
    }
    if (scan.conditional_store) {
      return error(
          kKind, 4, "UnsupportedAccess", operand,
          [&] {
            return fmt::format("the block stores '{}' under a condition: the copy back would write every point",
                               buffer->name);
          },
          here);
    }
    if (body_loads && !init_writes) {
      return error(
          kKind, 4, "UnsupportedAccess", operand,
          [&] {
            return fmt::format("the block reads '{}' without an init writing it first: the copy would start empty",
                               buffer->name);
          },
          here);
    }
  }

  plan.at = tree_->statement_in(scope, block);
  for (const BlockTree::BlockInfo& other : tree_->blocks()) {
    const BlockNode* b = other.block;
    if (b == block || !other.leaf || !tree_->encloses(scope, b) || tree_->statement_in(scope, b) != plan.at) continue;
    const bool writes = detail::has_buffer(b->writes, buffer.get());
    if (writes || (!is_read && detail::has_buffer(b->reads, buffer.get()))) {
      return error(
          kKind, 5, "SharedLoopNest", operand,
          [&] {
            return fmt::format("block '{}' {} '{}' in the same loop nest", b->name, writes ? "writes" : "reads",
                               buffer->name);
          },
          ErrorLocus{nullptr, b->name});
    }
  }
  return plan;
}

BlockRV Schedule::reindex(BlockRV block_rv, int64_t buffer_index, BufferIndexType buffer_index_type) {
  constexpr InstructionKind kKind = InstructionKind::ReIndex;
  const detail::ReIndexPlan plan = plan_reindex(block_rv, buffer_index, buffer_index_type).take();
  const BlockNode* block = plan.block;
  const Buffer& buffer = plan.buffer;
  const std::string name = detail::fresh_block_name(func_, buffer->name + "_reindex");

  // The new buffer's shape and the block's new indices: one dimension per used variable.
  std::vector<int64_t> shape;
  std::vector<Expr> new_indices;
  Analyzer analyzer;
  for (const IterVar& iv : block->iter_vars) analyzer.bind(iv.var, iv.dom);
  for (size_t p : plan.used) {
    const IterVar& iv = block->iter_vars[p];
    shape.push_back(*as_const_int(iv.dom.extent));
    // The variable itself even where its extent is 1: a copy block writing at distinct
    // iteration variables can be moved under the block's loops (compute_at).
    new_indices.push_back(is_const_int(iv.dom.min, 0) ? Expr(iv.var) : analyzer.simplify(iv.var - iv.dom.min));
  }
  Buffer fresh = Buffer::make(name, buffer->dtype, shape, buffer->scope);

  AccessRewriter rewriter(buffer, fresh, new_indices);
  Stmt init = block->init.defined() ? rewriter.visit(block->init) : Stmt();
  Block rewritten =
      BlockNode::make(block->name, block->iter_vars, rewriter.regions(block->reads), rewriter.regions(block->writes),
                      rewriter.visit(block->body), init, block->alloc_buffers, block->annotations);

  // The copy: fresh iteration variables over the used domains, under loops of their own.
  std::vector<IterVar> iters;
  std::vector<Var> loops;
  std::vector<Expr> bindings;
  VarMap to_copy;
  for (size_t p : plan.used) {
    const IterVar& iv = block->iter_vars[p];
    const DataType type = iv.var.dtype();
    Var v(iv.var.name(), type);
    Var loop(fmt::format("ax{}", loops.size()), type);
    iters.push_back(IterVar{v, iv.dom, IterKind::kSpatial});
    loops.push_back(loop);
    bindings.push_back(analyzer.simplify(loop + iv.dom.min));
    to_copy[iv.var.get()] = v;
  }
  std::vector<Expr> old_at, fresh_at;
  for (const Expr& e : plan.indices) old_at.push_back(detail::substitute_vars(e, to_copy));
  for (const Expr& e : new_indices) fresh_at.push_back(detail::substitute_vars(e, to_copy));
  auto point = [](const Buffer& b, const std::vector<Expr>& at) {
    std::vector<Range> r;
    for (const Expr& i : at) r.push_back(Range{i, make_const(i.dtype(), 1)});
    return BufferRegion{b, std::move(r)};
  };
  Stmt store = plan.is_read ? BufferStoreNode::make(fresh, BufferLoadNode::make(buffer, old_at), fresh_at)
                            : BufferStoreNode::make(buffer, BufferLoadNode::make(fresh, fresh_at), old_at);
  BufferRegion from = plan.is_read ? point(buffer, old_at) : point(fresh, fresh_at);
  BufferRegion to = plan.is_read ? point(fresh, fresh_at) : point(buffer, old_at);
  Stmt nest = BlockRealizeNode::make(bindings, Expr(), BlockNode::make(name, iters, {from}, {to}, store));
  for (size_t d = loops.size(); d-- > 0;) {
    nest = ForNode::make(loops[d], make_zero(loops[d].dtype()), iters[d].dom.extent, ForKind::kSerial, nest);
  }

  PrimFunc result = detail::replace_in_func(func_, block, rewritten);
  const BlockNode* scope = detail::find_block_realize(result, plan.scope->name) != nullptr
                               ? detail::find_block_realize(result, plan.scope->name)->block.get()
                               : nullptr;
  if (scope == nullptr) {
    // The root block of a function whose body is a bare block has no realization.
    scope = result->body.as<BlockNode>();
  }
  DRAGON_CHECK(scope != nullptr && scope->name == plan.scope->name, "reindex lost scope block '{}'", plan.scope->name);
  std::vector<Stmt> stmts;
  if (const auto* seq = scope->body.as<SeqStmtNode>()) {
    stmts = seq->seq;
  } else {
    stmts = {scope->body};
  }
  stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(plan.at + (plan.is_read ? 0 : 1)), nest);
  std::vector<Buffer> allocs = scope->alloc_buffers;
  allocs.push_back(fresh);
  Stmt new_scope = BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes,
                                   SeqStmtNode::make(stmts), scope->init, std::move(allocs), scope->annotations);
  result = detail::replace_in_func(result, scope, new_scope);

  BlockRV out = new_block_rv(name);
  commit(std::move(result), detail::make_instruction(kKind, {out}, block_rv, buffer_index,
                                                     int64_t{plan.is_read ? 0 : 1}));
  return out;
}

CheckResult Schedule::check_reindex(const detail::CheckedOperands& ops) const {
  ops.expect(1, 2);
  std::optional<BufferIndexType> type;
  if (auto t = ops.int_attr(1)) {
    if (*t != 0 && *t != 1) {
      throw UserError(fmt::format("ReIndex: buffer_index_type must be 0 (read) or 1 (write), not {}", *t));
    }
    type = *t == 0 ? BufferIndexType::kRead : BufferIndexType::kWrite;
  }
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  if (!block) return detail::unknown();
  return detail::verdict(plan_reindex(*block, index, type), index && type, 1);
}

namespace detail {

constexpr auto kReIndexSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("buffer_index", ValueType::kInt),
    slot::attr("buffer_index_type", ValueType::kInt),
});

std::vector<RandomVar> replay_reindex(Schedule& sch, const Operands& operands) {
  auto [block, buffer_index, type] = operands.unpack<BlockRV, int64_t, int64_t>();
  if (type != 0 && type != 1) {
    throw UserError(fmt::format("ReIndex: buffer_index_type must be 0 (read) or 1 (write), not {}", type));
  }
  return {sch.reindex(block, buffer_index,
                      type == 0 ? Schedule::BufferIndexType::kRead : Schedule::BufferIndexType::kWrite)};
}

constinit const InstructionSignature kReIndexSignature{
    .python_name = "reindex",
    .slots = kReIndexSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_reindex,
    .check = check_method<&Schedule::check_reindex>,
};

}  // namespace detail
}  // namespace dragon::schedule
