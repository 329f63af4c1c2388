// lower_cross_thread_reduction (passes.h): a reduction block whose reduce loop is bound to
// threadIdx.* becomes, in block IR, (1) a per-thread partial result in a local buffer,
// (2) a tree in shared memory that halves the live partials per step, one block per step,
// and (3) a write-back by thread 0. Barriers between the steps are insert_thread_syncs'
// job; warp shuffles are not used (plain shared memory). Not a schedule transformation.
#include <unordered_set>

#include "dragon/ir/combiner.h"
#include "dragon/ir/conjuncts.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/uses_var.h"
#include "dragon/ir/op.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/substitute.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {


struct ReductionUpdate {
  ir::Combiner reducer = ir::Combiner::kAdd;
  ir::Buffer output;
  std::vector<ir::Expr> indices;
  ir::Expr operand;             // the value folded into the output
  bool output_first = true;     // C op x (true) or x op C
  ir::Expr init_value;
};

bool same_indices(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ir::structural_equal(a[i], b[i])) return false;
  }
  return true;
}

// C[I] = C[I] op x with init C[I] = v, op one of +, *, max, min; nullopt otherwise.
std::optional<ReductionUpdate> match_reduction(const ir::BlockNode* block) {
  const auto* store = block->body.as<ir::BufferStoreNode>();
  const auto* init = block->init.defined() ? block->init.as<ir::BufferStoreNode>() : nullptr;
  if (store == nullptr || init == nullptr || !init->buffer.same_as(store->buffer) ||
      !same_indices(init->indices, store->indices) || ir::loads_buffer(init->value, nullptr)) {
    return std::nullopt;
  }
  ReductionUpdate u;
  u.output = store->buffer;
  u.indices = store->indices;
  u.init_value = init->value;
  std::optional<ir::Combination> combination = ir::as_combination(store->value);
  if (!combination) return std::nullopt;
  u.reducer = combination->combiner;
  const ir::Expr& a = combination->a;
  const ir::Expr& b = combination->b;
  auto is_self = [&](const ir::Expr& e) {
    const auto* load = e.as<ir::BufferLoadNode>();
    return load != nullptr && load->buffer.same_as(u.output) && same_indices(load->indices, u.indices);
  };
  if (is_self(a) && !ir::loads_buffer(b, u.output.get())) {
    u.operand = b, u.output_first = true;
  } else if (is_self(b) && !ir::loads_buffer(a, u.output.get())) {
    u.operand = a, u.output_first = false;
  } else {
    return std::nullopt;
  }
  return u;
}

// The conjuncts of `e` but the constant true ones.
void conjuncts(const ir::Expr& e, std::vector<ir::Expr>& out) {
  for (const ir::Expr& c : ir::split_conjuncts(e)) {
    if (!ir::is_const_int(c, 1)) out.push_back(c);
  }
}

ir::IterVar spatial(const std::string& name, int64_t extent, ir::DataType type = ir::DataType::i32()) {
  return ir::IterVar{ir::Var(name, type), ir::Range::make(ir::make_zero(type), ir::make_const(type, double(extent))),
                     ir::IterKind::kSpatial};
}

ir::Range point(const ir::Expr& e) { return ir::Range::make(e, ir::make_const(e.dtype(), 1)); }

struct ThreadLoop {
  const ir::ForNode* loop;
  int64_t extent;
};

class CrossThreadLowerer : public ir::StmtMutator {
 protected:
  using ir::StmtMutator::visit_;

  ir::Stmt visit_(const ir::BlockNode* op) override {
    std::vector<const ir::ForNode*> saved_loops = std::move(loops_);
    loops_.clear();
    std::vector<ir::Buffer> saved_new = std::move(new_buffers_);
    new_buffers_.clear();
    bool saved_outer = outer_scope_threads_;
    for (const ir::ForNode* l : saved_loops) {
      if (l->for_kind == ir::ForKind::kThreadBinding && !gpu::is_block_tag(l->thread_tag)) outer_scope_threads_ = true;
    }
    ir::Stmt s = ir::StmtMutator::visit_(op);
    if (!new_buffers_.empty()) {
      const auto* b = s.as<ir::BlockNode>();
      std::vector<ir::Buffer> allocs = b->alloc_buffers;
      allocs.insert(allocs.end(), new_buffers_.begin(), new_buffers_.end());
      s = ir::BlockNode::make(b->name, b->iter_vars, b->reads, b->writes, b->body, b->init, allocs, b->annotations);
    }
    new_buffers_ = std::move(saved_new);
    loops_ = std::move(saved_loops);
    outer_scope_threads_ = saved_outer;
    return s;
  }

  ir::Stmt visit_(const ir::ForNode* op) override {
    if (const ir::ForNode* tl = reduction_chain_thread_loop(op)) return lower(op, tl);
    loops_.push_back(op);
    ir::Stmt s = ir::StmtMutator::visit_(op);
    loops_.pop_back();
    return s;
  }

 private:
  // Whether a block realized under `loop` (in this scope) binds it into a reduce variable.
  static bool feeds_reduction(const ir::ForNode* loop) {
    struct Finder : ir::StmtVisitor {
      const ir::VarNode* var;
      bool found = false;
      using ir::StmtVisitor::visit_;
      void visit_(const ir::BlockRealizeNode* op) override {
        for (size_t i = 0; i < op->iter_values.size(); ++i) {
          if (op->block->iter_vars[i].kind == ir::IterKind::kReduce &&
              gpu::uses_var(op->iter_values[i], [&](const ir::VarNode* v) { return v == var; })) {
            found = true;
          }
        }
      }
    } f;
    f.var = loop->loop_var.get();
    f.visit(loop->body);
    return f.found;
  }

  [[noreturn]] void fail(const ir::ForNode* loop, const std::string& why) const {
    throw UserError(fmt::format("cross-thread reduction over loop '{}' bound to {}: {}", loop->loop_var.name(),
                                loop->thread_tag, why));
  }

  int64_t constant(const ir::ForNode* loop) const {
    std::optional<int64_t> e = ir::as_const_int(loop->extent);
    if (!e || !ir::is_const_int(loop->min, 0)) fail(loop, "the loop must start at 0 and have a constant extent");
    return *e;
  }

  // When `op` starts the loop chain of a cross-thread reduction, the thread loop in it:
  // either `op` is a threadIdx loop feeding a reduce variable, or `op` feeds only reduce
  // variables and holds, as a chain of single loops, such a thread loop (MetaSchedule's
  // split [rest, threads] with the inner loop bound leaves the rest above it).
  static const ir::ForNode* reduction_chain_thread_loop(const ir::ForNode* op) {
    auto is_reducing_thread_loop = [](const ir::ForNode* l) {
      return l->for_kind == ir::ForKind::kThreadBinding && gpu::is_thread_tag(l->thread_tag) && feeds_reduction(l);
    };
    if (is_reducing_thread_loop(op)) return op;
    if (op->for_kind == ir::ForKind::kThreadBinding || !feeds_only_reduction(op)) return nullptr;
    for (const ir::ForNode* l = op->body.as<ir::ForNode>(); l != nullptr; l = l->body.as<ir::ForNode>()) {
      if (is_reducing_thread_loop(l)) return l;
      if (l->for_kind == ir::ForKind::kThreadBinding || !feeds_only_reduction(l)) return nullptr;
    }
    return nullptr;
  }

  // Whether the loop feeds reduce variables of blocks below it and nothing else.
  static bool feeds_only_reduction(const ir::ForNode* loop) {
    struct Checker : ir::StmtVisitor {
      const ir::VarNode* var;
      bool reduce = false, other = false;
      using ir::StmtVisitor::visit_;
      void visit_(const ir::BlockRealizeNode* op) override {
        auto is_var = [&](const ir::VarNode* v) { return v == var; };
        for (size_t i = 0; i < op->iter_values.size(); ++i) {
          if (!gpu::uses_var(op->iter_values[i], is_var)) continue;
          (op->block->iter_vars[i].kind == ir::IterKind::kReduce ? reduce : other) = true;
        }
      }
    } c;
    c.var = loop->loop_var.get();
    c.visit(loop->body);
    return c.reduce && !c.other;
  }

  ir::Stmt lower(const ir::ForNode* top, const ir::ForNode* tl) {
    if (outer_scope_threads_) fail(tl, "the block holding it is itself under thread-bound loops (unsupported)");
    int64_t threads = constant(tl);
    // The chain of loops from `top` down to the one reduction block; all but the thread
    // loop run inside each thread.
    std::vector<const ir::ForNode*> inner;
    ir::Stmt s = ir::Stmt(top);
    while (const auto* loop = s.as<ir::ForNode>()) {
      if (loop != tl) {
        if (loop->for_kind == ir::ForKind::kThreadBinding) fail(tl, "more than one thread axis feeds the reduction");
        inner.push_back(loop);
      }
      s = loop->body;
    }
    const auto* realize = s.as<ir::BlockRealizeNode>();
    if (realize == nullptr) fail(tl, "the loop must hold a chain of loops down to a single block");
    const ir::BlockNode* block = realize->block.get();
    std::optional<ReductionUpdate> u = match_reduction(block);
    if (!u) {
      fail(tl, fmt::format("block '{}' must be C[I] = C[I] op x (op one of +, *, max, min) with an init C[I] = v",
                           block->name));
    }
    std::unordered_set<const ir::VarNode*> inner_vars = {tl->loop_var.get()};
    for (const ir::ForNode* l : inner) inner_vars.insert(l->loop_var.get());
    auto uses_inner = [&](const ir::Expr& e) {
      return gpu::uses_var(e, [&](const ir::VarNode* v) { return inner_vars.count(v) > 0; });
    };
    std::vector<ir::IterVar> spatial_vars;
    std::vector<ir::Expr> spatial_values;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const ir::IterVar& iv = block->iter_vars[i];
      if (iv.kind == ir::IterKind::kSpatial) {
        if (uses_inner(realize->iter_values[i])) {
          fail(tl, fmt::format("spatial variable '{}' of block '{}' is fed by the thread loop or a loop below it",
                               iv.var.name(), block->name));
        }
        spatial_vars.push_back(iv);
        spatial_values.push_back(realize->iter_values[i]);
      } else if (iv.kind != ir::IterKind::kReduce) {
        fail(tl, fmt::format("block '{}' has an ordered or opaque iteration variable", block->name));
      } else if (gpu::uses_var(realize->iter_values[i], [&](const ir::VarNode* v) { return !inner_vars.count(v); })) {
        fail(tl, fmt::format("reduce variable '{}' of block '{}' is also fed by a loop above the thread loop",
                             iv.var.name(), block->name));
      }
    }
    // Parallel instances of the reduction in one thread block: the thread-bound loops above.
    std::vector<ThreadLoop> outer;
    for (const ir::ForNode* l : loops_) {
      if (l->for_kind == ir::ForKind::kThreadBinding && !gpu::is_block_tag(l->thread_tag)) {
        outer.push_back({l, constant(l)});
      }
    }

    ir::DataType type = u->output->dtype;
    std::vector<int64_t> red_shape;
    for (const ThreadLoop& o : outer) red_shape.push_back(o.extent);
    red_shape.push_back(threads);
    ir::Buffer partial = ir::Buffer::make(block->name + "_partial", type, {1}, "local");
    ir::Buffer red = ir::Buffer::make(block->name + "_red", type, red_shape, "shared");
    new_buffers_.push_back(partial);
    new_buffers_.push_back(red);
    ir::Expr zero = ir::make_zero(ir::DataType::i32());
    ir::BufferRegion partial_region{partial, {point(zero)}};

    // Iteration variables naming one thread's slot of `red`: the outer thread loops, then
    // the reducing thread; their bindings are those loops' variables and `thread`.
    auto slot_vars = [&](std::vector<ir::IterVar>& vars, std::vector<ir::Expr>& values, const ir::Var& thread) {
      std::vector<ir::Expr> index;
      for (const ThreadLoop& o : outer) {
        vars.push_back(spatial("v_" + o.loop->loop_var.name(), o.extent, o.loop->loop_var.dtype()));
        values.push_back(o.loop->loop_var);
        index.push_back(vars.back().var);
      }
      vars.push_back(spatial("v_" + tl->loop_var.name(), threads, tl->loop_var.dtype()));
      values.push_back(thread);
      index.push_back(vars.back().var);
      return index;
    };
    auto row_region = [&](const std::vector<ir::Expr>& index, ir::Expr min, int64_t extent) {
      std::vector<ir::Range> r;
      for (size_t d = 0; d + 1 < index.size(); ++d) r.push_back(point(index[d]));
      r.push_back(ir::Range::make(min, ir::make_const(min.dtype(), double(extent))));
      return ir::BufferRegion{red, r};
    };
    auto thread_loop = [&](const ir::Var& var, ir::Stmt body) {
      return ir::ForNode::make(var, tl->min, tl->extent, ir::ForKind::kThreadBinding, body, tl->thread_tag);
    };
    std::vector<ir::Stmt> steps;

    // (1) Each thread folds its share into `partial`, then publishes it in `red`.
    {
      ir::Block init = ir::BlockNode::make(block->name + "_partial_init", {}, {}, {partial_region},
                                           ir::BufferStoreNode::make(partial, ir::combiner_identity(u->reducer, type), {zero}));
      ir::Expr acc = ir::BufferLoadNode::make(partial, {zero});
      ir::Expr folded = u->output_first ? ir::combine(u->reducer, acc, u->operand) : ir::combine(u->reducer, u->operand, acc);
      std::vector<ir::BufferRegion> reads;
      for (const ir::BufferRegion& r : block->reads) {
        if (!r.buffer.same_as(u->output)) reads.push_back(r);
      }
      reads.push_back(partial_region);
      ir::Block update =
          ir::BlockNode::make(block->name + "_in_thread", block->iter_vars, reads, {partial_region},
                              ir::BufferStoreNode::make(partial, folded, {zero}), {}, {}, block->annotations);
      ir::Stmt nest = ir::BlockRealizeNode::make(realize->iter_values, realize->predicate, update);
      for (auto it = inner.rbegin(); it != inner.rend(); ++it) {
        const ir::ForNode* l = *it;
        nest = ir::ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, nest, l->thread_tag, l->annotations);
      }
      std::vector<ir::IterVar> vars;
      std::vector<ir::Expr> values;
      std::vector<ir::Expr> index = slot_vars(vars, values, tl->loop_var);
      ir::Block publish = ir::BlockNode::make(block->name + "_to_shared", vars, {partial_region},
                                              {row_region(index, index.back(), 1)},
                                              ir::BufferStoreNode::make(red, acc, index));
      steps.push_back(thread_loop(tl->loop_var, ir::SeqStmtNode::make({
                                                    ir::BlockRealizeNode::make({}, ir::make_bool(true), init),
                                                    nest,
                                                    ir::BlockRealizeNode::make(values, ir::make_bool(true), publish),
                                                })));
    }
    // (2) The tree: at stride s, thread t < s folds in slot t + s.
    int64_t span = 1;
    while (span < threads) span *= 2;
    for (int64_t stride = span / 2; stride >= 1; stride /= 2) {
      ir::Var t(tl->loop_var.name(), tl->loop_var.dtype());
      std::vector<ir::IterVar> vars;
      std::vector<ir::Expr> values;
      std::vector<ir::Expr> index = slot_vars(vars, values, t);
      std::vector<ir::Expr> other = index;
      ir::Expr s = ir::make_const(t.dtype(), double(stride));
      other.back() = other.back() + s;
      ir::Expr mine = ir::BufferLoadNode::make(red, index);
      ir::Expr theirs = ir::BufferLoadNode::make(red, other);
      ir::Block fold = ir::BlockNode::make(fmt::format("{}_tree_{}", block->name, stride), vars,
                                           {row_region(index, ir::make_zero(t.dtype()), threads)},
                                           {row_region(index, index.back(), 1)},
                                           ir::BufferStoreNode::make(red, ir::combine(u->reducer, mine, theirs), index));
      ir::Expr pred = t < s;
      if (2 * stride > threads) pred = pred && (t + s < ir::make_const(t.dtype(), double(threads)));
      steps.push_back(thread_loop(t, ir::BlockRealizeNode::make(values, pred, fold)));
    }
    // (3) Thread 0 writes the result, combined with the init value, where the block wrote.
    {
      ir::Var t(tl->loop_var.name(), tl->loop_var.dtype());
      std::vector<ir::IterVar> vars;
      std::vector<ir::Expr> values;
      ir::VarMap rename;
      for (size_t i = 0; i < spatial_vars.size(); ++i) {
        ir::IterVar fresh = spatial_vars[i];
        fresh.var = ir::Var(fresh.var.name(), fresh.var.dtype());
        rename[spatial_vars[i].var.get()] = fresh.var;
        vars.push_back(fresh);
        values.push_back(spatial_values[i]);
      }
      std::vector<ir::Expr> index = slot_vars(vars, values, t);
      std::vector<ir::Expr> first = index;
      first.back() = ir::make_zero(first.back().dtype());
      ir::Expr result = ir::BufferLoadNode::make(red, first);
      ir::Expr init = ir::substitute(u->init_value, rename);
      if (!ir::structural_equal(init, ir::combiner_identity(u->reducer, type))) {
        result = u->output_first ? ir::combine(u->reducer, init, result) : ir::combine(u->reducer, result, init);
      }
      std::vector<ir::Expr> out_index;
      for (const ir::Expr& e : u->indices) out_index.push_back(ir::substitute(e, rename));
      std::vector<ir::BufferRegion> writes;
      for (const ir::BufferRegion& r : block->writes) {
        ir::BufferRegion w{r.buffer, {}};
        for (const ir::Range& range : r.region) {
          w.region.push_back(ir::Range::make(ir::substitute(range.min, rename), ir::substitute(range.extent, rename)));
        }
        writes.push_back(w);
      }
      ir::Block write_back = ir::BlockNode::make(block->name, vars, {row_region(index, first.back(), 1)}, writes,
                                                 ir::BufferStoreNode::make(u->output, result, out_index));
      std::vector<ir::Expr> terms = {ir::eq(t, 0)};
      std::vector<ir::Expr> original;
      if (realize->predicate.defined()) conjuncts(realize->predicate, original);
      for (const ir::Expr& c : original) {
        if (!uses_inner(c)) terms.push_back(c);
      }
      steps.push_back(thread_loop(t, ir::BlockRealizeNode::make(values, ir::conjunction(terms), write_back)));
    }
    return ir::SeqStmtNode::make(std::move(steps));
  }

  std::vector<const ir::ForNode*> loops_;  // enclosing loops inside the current block
  std::vector<ir::Buffer> new_buffers_;     // to allocate in the current block
  bool outer_scope_threads_ = false;  // thread-bound loops enclose the current block
};

}  // namespace

// The target does not change the lowering (the thread count is the schedule's; too many
// threads are verify_gpu_code's to refuse).
ir::PrimFunc lower_cross_thread_reduction(const ir::PrimFunc& func, const Target& target) {
  CrossThreadLowerer lowerer;
  ir::Stmt body = lowerer.visit(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
