// carry_loop_values: a serial loop that stores one element of a buffer per iteration and
// reads back, in the value it stores, the element the previous iteration stored (a scan's
// running value: Y[i] = select(i == 0, X[i], Y[i - 1] + X[i])) keeps that value in a
// one-element local buffer. The read went to memory right behind the store, so each term
// of a scan waited for a store and a load to reach L2 and back: KernelBench's cumsum
// (32768 rows of 32768) took 23.8 ms on an H100 against eager's 5.1 ms, one round trip
// per term. The arithmetic and the stores are unchanged, only where the operand comes
// from, so the results are bit for bit the same.
//
// The loop may be a nest: a scan axis split into chunks (for i0 { stage a chunk of X in
// shared memory; for i1 { Y[32 i0 + i1] = ... Y[32 i0 + i1 - 1] ... } }) carries its value
// across the chunks, since the nest's iterations run in the order of the linear index
// (i0 - min0) * extent1 + (i1 - min1) and the store's index is linear in it.
//
// When it applies (else the loop is left alone):
// - the loop, and every loop between it and the store (the chain) but those bound to
//   threadIdx (each thread carries its own value: the carry is local), are serial
//   or unrolled, with bounds that do not depend on one another; the buffer has exactly one
//   store in the loop's body, executed once per iteration of the chain: not inside any
//   other loop nor under a condition that uses a chain variable (a condition that does not
//   is the same every iteration). One exception, for a chain of one loop: guards that hold
//   on a prefix of its iterations (conjuncts a < b, a <= b whose a - b never decreases
//   from one iteration to the next: the bound of a last, partial chunk of a chunked scan).
//   The carry is then updated under the same guard, and once it fails no later iteration
//   reads the carry;
// - each dimension of the store's index is linear in the chain's linear index: a step back
//   in any chain loop moves it by the innermost loop's step times the iterations of the
//   loops inside;
// - every load of the buffer in the stored value is at that index one step back in the
//   innermost loop, and where the chain's first iteration cannot reach it (the false side
//   of a select on "linear index at 0", or the true side of its negation), since at the
//   first iteration the carried value does not exist yet. Loads elsewhere in the loop stay
//   (the store still writes every element): a chunk of a staged scan copied out of shared
//   memory after its loop reads what the stores wrote.
//
// Lowering runs it twice: on buffers of several dimensions before compact_buffers, so that
// a scan's read of its previous element no longer widens the region a staged (shared)
// output is compacted to (the first element of a chunk would read the compacted copy's
// stale slot, not the previous chunk's last value), and again after flattening.
#include <optional>
#include <vector>

#include "dragon/ir/conjuncts.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/substitute.h"
#include "dragon/ir/uses_var.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

// A loop's stores and their circumstances.
struct StoreSite {
  const ir::BufferStoreNode* store;
  std::vector<const ir::ForNode*> inner_loops;  // between the loop and the store, outermost first
  // Under the else side of a condition that uses the loop's or an inner loop's variable.
  bool conditional;
  // The conditions that use those variables with the store on their then side.
  std::vector<ir::Expr> guards;
};

class StoreCollector : public ir::StmtVisitor {
 public:
  explicit StoreCollector(const ir::VarNode* loop_var) : loop_vars_{loop_var} {}
  std::vector<StoreSite> stores;

 protected:
  void visit_(const ir::ForNode* op) override {
    inner_loops_.push_back(op);
    loop_vars_.push_back(op->loop_var.get());
    ir::StmtVisitor::visit_(op);
    loop_vars_.pop_back();
    inner_loops_.pop_back();
  }
  void visit_(const ir::IfThenElseNode* op) override {
    bool varies = false;
    for (const ir::VarNode* var : loop_vars_) varies = varies || ir::uses_var(op->condition, var);
    if (!varies) {
      ir::StmtVisitor::visit_(op);
      return;
    }
    guards_.push_back(op->condition);
    visit(op->then_case);
    guards_.pop_back();
    if (op->else_case.defined()) {
      ++varying_else_;
      visit(op->else_case);
      --varying_else_;
    }
  }
  void visit_(const ir::BufferStoreNode* op) override {
    stores.push_back({op, inner_loops_, varying_else_ > 0, guards_});
    ir::StmtVisitor::visit_(op);
  }

 private:
  std::vector<const ir::VarNode*> loop_vars_;
  std::vector<const ir::ForNode*> inner_loops_;
  std::vector<ir::Expr> guards_;
  int varying_else_ = 0;
};

// Whether `guard` holds on a prefix of the chain's iterations: its conjuncts use no chain
// variable (the same every iteration), or the chain is one loop and the conjunct reads
// a < b or a <= b (or b > a, b >= a) with a - b never smaller than one iteration before.
bool holds_on_a_prefix(const ir::Expr& guard, const std::vector<const ir::ForNode*>& chain,
                       const ir::Analyzer& analyzer) {
  const ir::ForNode* loop = chain.front();
  const ir::VarNode* var = loop->loop_var.get();
  for (const ir::Expr& c : ir::split_conjuncts(guard)) {
    bool uses_chain = false;
    for (const ir::ForNode* l : chain) uses_chain = uses_chain || ir::uses_var(c, l->loop_var.get());
    if (!uses_chain) continue;
    if (chain.size() != 1) return false;
    ir::Expr rising;  // a - b
    if (const auto* n = c.as<ir::LTNode>()) rising = n->a - n->b;
    else if (const auto* n = c.as<ir::LENode>()) rising = n->a - n->b;
    else if (const auto* n = c.as<ir::GTNode>()) rising = n->b - n->a;
    else if (const auto* n = c.as<ir::GENode>()) rising = n->b - n->a;
    else return false;
    ir::VarMap back;
    back[var] = loop->loop_var - ir::make_const(loop->loop_var.dtype(), 1);
    if (!analyzer.can_prove(rising - ir::substitute(rising, back) >= ir::make_zero(rising.dtype()))) return false;
  }
  return true;
}

// Counts the loads of one buffer anywhere in a statement.
class LoadCounter : public ir::StmtExprVisitor {
 public:
  explicit LoadCounter(const ir::BufferNode* buffer) : buffer_(buffer) {}
  int count = 0;

 protected:
  void visit_(const ir::BufferLoadNode* op) override {
    count += op->buffer.get() == buffer_ ? 1 : 0;
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  const ir::BufferNode* buffer_;
};

// Checks the loads of the buffer in a stored value: each at `previous` (the store's index
// one iteration back) and out of the first iteration's reach. `offset` is the chain's
// linear index, 0 at its first iteration.
class CarriedLoadChecker : public ir::ExprVisitor {
 public:
  CarriedLoadChecker(const ir::BufferNode* buffer, const std::vector<ir::Expr>& previous, const ir::Expr& offset,
                     const ir::Analyzer& analyzer)
      : buffer_(buffer), previous_(previous), offset_(offset), analyzer_(analyzer) {}
  int carried = 0;
  bool ok = true;

 protected:
  void visit_(const ir::SelectNode* op) override {
    visit(op->condition);
    const bool before = past_first_;
    past_first_ = before || holds_only_past_first(op->condition);
    visit(op->true_value);
    past_first_ = before || holds_only_at_first(op->condition);
    visit(op->false_value);
    past_first_ = before;
  }
  void visit_(const ir::BufferLoadNode* op) override {
    ir::ExprVisitor::visit_(op);
    if (op->buffer.get() != buffer_) return;
    bool at_previous = past_first_ && op->indices.size() == previous_.size();
    for (size_t d = 0; at_previous && d < previous_.size(); ++d) {
      at_previous = analyzer_.can_prove_equal(op->indices[d], previous_[d]);
    }
    if (!at_previous) {
      ok = false;
      return;
    }
    ++carried;
  }

 private:
  // a == b exactly at the first iteration: a - b is +-offset.
  bool is_first_iteration_test(const ir::Expr& a, const ir::Expr& b) const {
    return analyzer_.can_prove_equal(a - b, offset_) || analyzer_.can_prove_equal(b - a, offset_);
  }
  bool holds_only_at_first(const ir::Expr& c) const {
    if (const auto* eq = c.as<ir::EQNode>()) return is_first_iteration_test(eq->a, eq->b);
    return false;
  }
  bool holds_only_past_first(const ir::Expr& c) const {
    if (const auto* ne = c.as<ir::NENode>()) return is_first_iteration_test(ne->a, ne->b);
    if (const auto* gt = c.as<ir::GTNode>()) return analyzer_.can_prove_equal(gt->a - gt->b, offset_);
    if (const auto* lt = c.as<ir::LTNode>()) return analyzer_.can_prove_equal(lt->b - lt->a, offset_);
    return false;
  }

  const ir::BufferNode* buffer_;
  std::vector<ir::Expr> previous_;
  ir::Expr offset_;
  const ir::Analyzer& analyzer_;
  bool past_first_ = false;
};

// Replaces the loads of one buffer in an expression by a load of the carry.
class CarriedLoadReplacer : public ir::ExprMutator {
 public:
  CarriedLoadReplacer(const ir::BufferNode* buffer, ir::Buffer carry) : buffer_(buffer), carry_(std::move(carry)) {}
  using ir::ExprMutator::visit;

 protected:
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) return ir::BufferLoadNode::make(carry_, {ir::make_const(ir::DataType::i32(), 0)});
    return ir::ExprMutator::visit_(op);
  }

 private:
  const ir::BufferNode* buffer_;
  ir::Buffer carry_;
};

// Puts the carry in place of the one store's loads; the store becomes "carry = value;
// buffer[index] = carry".
class StoreRewriter : public ir::StmtMutator {
 public:
  StoreRewriter(const ir::BufferStoreNode* store, ir::Buffer carry) : store_(store), carry_(std::move(carry)) {}

 protected:
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    if (op != store_) return ir::StmtMutator::visit_(op);
    const ir::Expr zero = ir::make_const(ir::DataType::i32(), 0);
    ir::Expr value = CarriedLoadReplacer(op->buffer.get(), carry_).visit(op->value);
    return ir::SeqStmtNode::make({ir::BufferStoreNode::make(carry_, std::move(value), {zero}),
                                  ir::BufferStoreNode::make(op->buffer, ir::BufferLoadNode::make(carry_, {zero}),
                                                            op->indices)});
  }

 private:
  const ir::BufferStoreNode* store_;
  ir::Buffer carry_;
};

class LoopValueCarrier : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);  // inner loops first
    // One buffer at a time: a carried buffer's loads are gone when the next is looked for.
    while (std::optional<ir::Stmt> carried = carry_one(visited.as<ir::ForNode>())) visited = std::move(*carried);
    return visited;
  }

 private:
  // threadIdx loops only: a blockIdx loop inside a serial loop is a kernel launched per
  // iteration, and a local carry would not outlive its launch.
  static bool bound_to_gpu_threads(const ir::ForNode* loop) {
    return loop->for_kind == ir::ForKind::kThreadBinding && loop->thread_tag.starts_with("threadIdx.");
  }

  static bool in_order(const ir::ForNode* loop) {
    return loop->for_kind == ir::ForKind::kSerial || loop->for_kind == ir::ForKind::kUnrolled;
  }

  std::optional<ir::Stmt> carry_one(const ir::ForNode* loop) {
    if (loop == nullptr || loop->for_kind != ir::ForKind::kSerial) return std::nullopt;
    StoreCollector collector(loop->loop_var.get());
    collector.visit(loop->body);
    for (const StoreSite& site : collector.stores) {
      const ir::BufferStoreNode* store = site.store;
      const ir::BufferNode* buffer = store->buffer.get();
      if (site.conditional || store->buffer->scope == "warp") continue;
      int stores_to_buffer = 0;
      for (const StoreSite& other : collector.stores) stores_to_buffer += other.store->buffer.get() == buffer ? 1 : 0;
      if (stores_to_buffer != 1) continue;
      LoadCounter in_value(buffer);
      in_value.visit(store->value);
      if (in_value.count == 0) continue;
      // Loops bound to GPU threads are not in the order: each thread keeps its own carry
      // (local memory), as its own stores are the ones it reads back.
      std::vector<const ir::ForNode*> chain = {loop};
      for (const ir::ForNode* inner : site.inner_loops) {
        if (!bound_to_gpu_threads(inner)) chain.push_back(inner);
      }
      if (!rectangular_in_order(chain)) continue;
      ir::Analyzer analyzer;
      for (const ir::ForNode* l : chain) analyzer.bind(l->loop_var, ir::Range::make(l->min, l->extent));
      bool prefix_guards = true;
      for (const ir::Expr& guard : site.guards) prefix_guards = prefix_guards && holds_on_a_prefix(guard, chain, analyzer);
      if (!prefix_guards) continue;
      std::optional<ChainStep> step = linear_in_chain(chain, store->indices, analyzer);
      // A store to one element every iteration moves nothing along the chain: a carry
      // already (the earlier run's), or an accumulator its first iteration reads.
      if (!step || same_element_every_iteration(store->indices, step->previous, analyzer)) continue;
      CarriedLoadChecker checker(buffer, step->previous, step->offset, analyzer);
      checker.visit(store->value);
      if (!checker.ok || checker.carried != in_value.count) continue;
      ir::Buffer carry = ir::Buffer::make(buffer->name + "_carry", buffer->dtype, {1}, "local");
      ir::Stmt body = StoreRewriter(store, carry).visit(loop->body);
      ir::Stmt rewritten = ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, std::move(body),
                                             loop->thread_tag, loop->annotations);
      // Initialized so no path reads an undefined value (the first iteration never uses it).
      ir::Stmt init = ir::BufferStoreNode::make(carry, ir::make_const(buffer->dtype, 0.0),
                                                {ir::make_const(ir::DataType::i32(), 0)});
      return ir::AllocateNode::make(carry, ir::SeqStmtNode::make({std::move(init), std::move(rewritten)}));
    }
    return std::nullopt;
  }

  static bool same_element_every_iteration(const std::vector<ir::Expr>& index, const std::vector<ir::Expr>& previous,
                                           const ir::Analyzer& analyzer) {
    for (size_t d = 0; d < index.size(); ++d) {
      if (!analyzer.can_prove_equal(index[d], previous[d])) return false;
    }
    return true;
  }

  // Chain loops that run in order (serial or unrolled), with bounds none of them sets.
  static bool rectangular_in_order(const std::vector<const ir::ForNode*>& chain) {
    for (const ir::ForNode* l : chain) {
      if (!in_order(l)) return false;
      for (const ir::ForNode* other : chain) {
        if (ir::uses_var(l->min, other->loop_var.get()) || ir::uses_var(l->extent, other->loop_var.get())) return false;
      }
    }
    return true;
  }

  // The store's index one step back in the chain's order, and the chain's linear index
  // (sum over the chain of (var - min) times the extents of the loops inside), when each
  // dimension of `index` is linear in that order: a step back in any loop moves it by the
  // innermost loop's step times those extents. `analyzer` has the chain's loop ranges.
  struct ChainStep {
    std::vector<ir::Expr> previous;
    ir::Expr offset;
  };
  static std::optional<ChainStep> linear_in_chain(const std::vector<const ir::ForNode*>& chain,
                                                  const std::vector<ir::Expr>& index, const ir::Analyzer& analyzer) {
    // The chain's arithmetic in one integer type: a nest that mixes i32 and i64 loops (a
    // fused extent past 2^31: a 4096^3 GEMM's three loops), or an index of another type, is
    // left alone rather than multiplied across types.
    const ir::DataType type = chain.back()->loop_var.dtype();
    for (const ir::ForNode* l : chain) {
      if (!(l->loop_var.dtype() == type && l->min.dtype() == type && l->extent.dtype() == type)) return std::nullopt;
    }
    for (const ir::Expr& e : index) {
      if (!(e.dtype() == type)) return std::nullopt;
    }
    auto one_back = [&](const ir::ForNode* l, const ir::Expr& e) {
      ir::VarMap map;
      map[l->loop_var.get()] = l->loop_var - ir::make_const(l->loop_var.dtype(), 1);
      return ir::substitute(e, map);
    };
    ChainStep out{{}, chain.back()->loop_var - chain.back()->min};
    for (const ir::Expr& e : index) out.previous.push_back(one_back(chain.back(), e));
    ir::Expr inside = ir::make_const(chain.back()->loop_var.dtype(), 1);  // iterations of the loops inside
    for (size_t j = chain.size() - 1; j-- > 0;) {
      inside = inside * chain[j + 1]->extent;
      for (size_t d = 0; d < index.size(); ++d) {
        const ir::Expr step = index[d] - out.previous[d];
        if (!analyzer.can_prove_equal(index[d] - one_back(chain[j], index[d]), step * inside)) return std::nullopt;
      }
      out.offset = out.offset + (chain[j]->loop_var - chain[j]->min) * inside;
    }
    return out;
  }
};

}  // namespace

ir::PrimFunc carry_loop_values(const ir::PrimFunc& func) {
  return func.with_body(LoopValueCarrier().visit(func->body));
}

}  // namespace dragon::lower
