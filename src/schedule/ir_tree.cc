// Internal IR navigation and rewriting for primitives: linear walks over the immutable
// tree (functions are small; a per-version index can come later if profiles ask).
#include "ir_tree.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/substitute.h"

namespace dragon::schedule::detail {

using namespace dragon::ir;

namespace {

// Depth-first search in StmtVisitor's order, over the statements that can hold others
// (stores and evaluations are leaves and never matched). A plain recursion: lookups of
// loops and blocks by variable or name run it often (every LoopRV/BlockRV resolution),
// and a visitor with a std::function per node cost several times more. `path` (when
// given) receives the nodes from the root to the match.
template <typename Found>
const StmtNode* find_first(const StmtNode* node, const Found& found, std::vector<const StmtNode*>* path) {
  if (node->kind == NodeKind::BufferStore || node->kind == NodeKind::Evaluate) return nullptr;
  if (path) path->push_back(node);
  if (found(node)) return node;
  const StmtNode* hit = nullptr;
  switch (node->kind) {
    case NodeKind::For: hit = find_first(static_cast<const ForNode*>(node)->body.get(), found, path); break;
    case NodeKind::Block: {
      const auto* block = static_cast<const BlockNode*>(node);
      if (block->init.defined()) hit = find_first(block->init.get(), found, path);
      if (hit == nullptr) hit = find_first(block->body.get(), found, path);
      break;
    }
    case NodeKind::BlockRealize:
      hit = find_first(static_cast<const BlockRealizeNode*>(node)->block.get(), found, path);
      break;
    case NodeKind::SeqStmt:
      for (const Stmt& s : static_cast<const SeqStmtNode*>(node)->seq) {
        if ((hit = find_first(s.get(), found, path)) != nullptr) break;
      }
      break;
    case NodeKind::IfThenElse: {
      const auto* branch = static_cast<const IfThenElseNode*>(node);
      hit = find_first(branch->then_case.get(), found, path);
      if (hit == nullptr && branch->else_case.defined()) hit = find_first(branch->else_case.get(), found, path);
      break;
    }
    case NodeKind::Allocate: hit = find_first(static_cast<const AllocateNode*>(node)->body.get(), found, path); break;
    default: break;
  }
  if (hit == nullptr && path) path->pop_back();
  return hit;
}

class ChildRealizeCollector : public StmtVisitor {
 public:
  std::vector<const BlockRealizeNode*> result;

 protected:
  void visit_(const BlockRealizeNode* op) override { result.push_back(op); }
  void visit_(const BufferStoreNode*) override {}
  void visit_(const EvaluateNode*) override {}
};

// Rebuilds only the statements holding `old` (every occurrence); the rest of the tree is
// shared and no expression is visited. A primitive replaces one subtree of a function of
// hundreds of statements at each commit: a mutator over every node and expression was
// 15% of a tensor-core candidate's sampling.
Stmt replace_under(const Stmt& stmt, const StmtNode* old, const Stmt& replacement) {
  const StmtNode* node = stmt.get();
  if (node == old) return replacement;
  switch (node->kind) {
    case NodeKind::For: {
      const auto* op = static_cast<const ForNode*>(node);
      Stmt body = replace_under(op->body, old, replacement);
      if (body.same_as(op->body)) return stmt;
      return ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, std::move(body), op->thread_tag,
                           op->annotations);
    }
    case NodeKind::Block: {
      const auto* op = static_cast<const BlockNode*>(node);
      Stmt init = op->init.defined() ? replace_under(op->init, old, replacement) : Stmt();
      Stmt body = replace_under(op->body, old, replacement);
      if (init.same_as(op->init) && body.same_as(op->body)) return stmt;
      return BlockNode::make(op->name, op->iter_vars, op->reads, op->writes, std::move(body), std::move(init),
                             op->alloc_buffers, op->annotations);
    }
    case NodeKind::BlockRealize: {
      // The block of a realization is replaced in place, keeping bindings.
      const auto* op = static_cast<const BlockRealizeNode*>(node);
      Stmt block = replace_under(Stmt(op->block.get()), old, replacement);
      if (block.get() == op->block.get()) return stmt;
      const auto* new_block = block.as<BlockNode>();
      DRAGON_CHECK(new_block != nullptr, "the block of a realization was replaced by a {}", node_kind_name(block.kind()));
      return BlockRealizeNode::make(op->iter_values, op->predicate, Block(new_block));
    }
    case NodeKind::SeqStmt: {
      const auto* op = static_cast<const SeqStmtNode*>(node);
      std::vector<Stmt> seq;  // filled from the first changed element on
      for (size_t i = 0; i < op->seq.size(); ++i) {
        Stmt s = replace_under(op->seq[i], old, replacement);
        if (seq.empty() && s.same_as(op->seq[i])) continue;
        if (seq.empty()) seq.assign(op->seq.begin(), op->seq.begin() + static_cast<std::ptrdiff_t>(i));
        seq.push_back(std::move(s));
      }
      return seq.empty() ? stmt : SeqStmtNode::make(std::move(seq));
    }
    case NodeKind::IfThenElse: {
      const auto* op = static_cast<const IfThenElseNode*>(node);
      Stmt then_case = replace_under(op->then_case, old, replacement);
      Stmt else_case = op->else_case.defined() ? replace_under(op->else_case, old, replacement) : Stmt();
      if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return stmt;
      return IfThenElseNode::make(op->condition, std::move(then_case), std::move(else_case));
    }
    case NodeKind::Allocate: {
      const auto* op = static_cast<const AllocateNode*>(node);
      Stmt body = replace_under(op->body, old, replacement);
      return body.same_as(op->body) ? stmt : AllocateNode::make(op->buffer, std::move(body));
    }
    default: return stmt;  // stores and evaluations hold no statement
  }
}

class LoopVarRewriter : public StmtMutator {
 public:
  LoopVarRewriter(const std::unordered_map<const VarNode*, Expr>& subst, Expr extra_predicate, Analyzer analyzer)
      : subst_(subst), extra_(std::move(extra_predicate)), analyzer_(std::move(analyzer)) {}
  Stmt run(const Stmt& s) { return visit(s); }

 protected:
  Expr mutate_expr(const Expr& e) override {
    if (!e.defined()) return e;
    Expr out = ir::substitute(e, subst_);
    return out.same_as(e) ? e : analyzer_.simplify(out);
  }
  Stmt visit_(const ForNode* op) override {
    Analyzer outer = analyzer_;
    Expr min = mutate_expr(op->min);
    Expr extent = mutate_expr(op->extent);
    analyzer_.bind(op->loop_var, Range{min, extent});
    Stmt body = visit(op->body);
    analyzer_ = std::move(outer);
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return Stmt(op);
    return ForNode::make(op->loop_var, min, extent, op->for_kind, body, op->thread_tag, op->annotations);
  }
  Stmt visit_(const BlockRealizeNode* op) override {
    std::vector<Expr> values;
    bool changed = false;
    for (const Expr& v : op->iter_values) {
      values.push_back(mutate_expr(v));
      changed |= !values.back().same_as(v);
    }
    Expr predicate = mutate_expr(op->predicate);
    if (extra_.defined()) {
      Expr guard = analyzer_.simplify(extra_);
      if (!is_const_int(guard, 1)) {
        predicate = is_const_int(predicate, 1) ? guard : analyzer_.simplify(predicate && guard);
      }
    }
    changed |= !predicate.same_as(op->predicate);
    // The block itself never sees outer loop variables: nothing to rewrite inside.
    if (!changed) return Stmt(op);
    return BlockRealizeNode::make(std::move(values), predicate, op->block);
  }

 private:
  const std::unordered_map<const VarNode*, Expr>& subst_;
  Expr extra_;
  Analyzer analyzer_;
};

class VarUseFinder : public ExprVisitor {
 public:
  explicit VarUseFinder(const std::vector<const VarNode*>& vars) : vars_(vars) {}
  bool found = false;

 protected:
  void visit_(const VarNode* op) override {
    for (const VarNode* v : vars_) found |= v == op;
  }
  using ExprVisitor::visit_;

 private:
  const std::vector<const VarNode*>& vars_;
};

}  // namespace

bool has_buffer(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(), [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

std::vector<const StmtNode*> path_to(const PrimFunc& func, const StmtNode* target) {
  std::vector<const StmtNode*> path;
  if (!func->body.defined() ||
      find_first(func->body.get(), [target](const StmtNode* n) { return n == target; }, &path) == nullptr) {
    return {};
  }
  return path;
}

const ForNode* find_loop(const PrimFunc& func, const VarNode* loop_var) {
  if (!func->body.defined()) return nullptr;
  return static_cast<const ForNode*>(find_first(
      func->body.get(),
      [loop_var](const StmtNode* n) {
        return n->kind == NodeKind::For && static_cast<const ForNode*>(n)->loop_var.get() == loop_var;
      },
      nullptr));
}

const BlockRealizeNode* find_block_realize(const PrimFunc& func, std::string_view name) {
  if (!func->body.defined()) return nullptr;
  return static_cast<const BlockRealizeNode*>(find_first(
      func->body.get(),
      [name](const StmtNode* n) {
        return n->kind == NodeKind::BlockRealize && static_cast<const BlockRealizeNode*>(n)->block->name == name;
      },
      nullptr));
}

std::vector<const ForNode*> loops_above(const std::vector<const StmtNode*>& path) {
  std::vector<const ForNode*> loops;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const StmtNode* n = path[i];
    // A block boundary: loops outside it are not this statement's (its own realization,
    // just above a target block, is not a boundary).
    if (n->kind == NodeKind::Block) loops.clear();
    if (n->kind == NodeKind::For) loops.push_back(static_cast<const ForNode*>(n));
  }
  return loops;
}

const BlockNode* scope_block(const std::vector<const StmtNode*>& path) {
  for (size_t i = path.size() - 1; i-- > 0;) {
    if (path[i]->kind == NodeKind::Block) return static_cast<const BlockNode*>(path[i]);
  }
  return nullptr;
}

std::vector<const BlockRealizeNode*> child_block_realizes(const Stmt& stmt) {
  // A block's own realization is not its child: start below it.
  ChildRealizeCollector collector;
  collector.visit(stmt);
  return collector.result;
}

Analyzer analyzer_for(const std::vector<const StmtNode*>& path) {
  Analyzer analyzer;
  for (const ForNode* loop : loops_above(path)) analyzer.bind(loop->loop_var, Range{loop->min, loop->extent});
  return analyzer;
}

Stmt replace_stmt(const Stmt& root, const StmtNode* old, const Stmt& replacement) {
  return root.defined() ? replace_under(root, old, replacement) : root;
}

PrimFunc replace_in_func(const PrimFunc& func, const StmtNode* old, const Stmt& replacement) {
  return func.with_body(replace_stmt(func->body, old, replacement));
}

Stmt rewrite_loop_vars(const Stmt& body, const std::unordered_map<const VarNode*, Expr>& subst,
                       const Expr& extra_predicate, const Analyzer& analyzer) {
  return LoopVarRewriter(subst, extra_predicate, analyzer).run(body);
}

bool uses_any_var(const Expr& e, const std::vector<const VarNode*>& vars) {
  if (!e.defined()) return false;
  VarUseFinder finder(vars);
  finder.visit(e);
  return finder.found;
}

namespace {

class BufferReplacer : public StmtExprMutator {
 public:
  explicit BufferReplacer(const std::unordered_map<const BufferNode*, Buffer>& subst) : subst_(subst) {}

 protected:
  using StmtExprMutator::visit_;
  Buffer map(const Buffer& b, bool& changed) const {
    auto it = subst_.find(b.get());
    if (it == subst_.end()) return b;
    changed = true;
    return it->second;
  }
  Expr visit_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::visit_(op);
    const auto* load = e.as<BufferLoadNode>();
    bool changed = false;
    Buffer b = map(load->buffer, changed);
    return changed ? BufferLoadNode::make(b, load->indices) : e;
  }
  Stmt visit_(const BufferStoreNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* store = s.as<BufferStoreNode>();
    bool changed = false;
    Buffer b = map(store->buffer, changed);
    return changed ? BufferStoreNode::make(b, store->value, store->indices) : s;
  }
  Stmt visit_(const BlockNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* block = s.as<BlockNode>();
    bool changed = false;
    auto regions = [&](const std::vector<BufferRegion>& in) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : in) out.push_back(BufferRegion{map(r.buffer, changed), r.region});
      return out;
    };
    std::vector<BufferRegion> reads = regions(block->reads);
    std::vector<BufferRegion> writes = regions(block->writes);
    std::vector<Buffer> allocs;
    for (const Buffer& b : block->alloc_buffers) allocs.push_back(map(b, changed));
    if (!changed) return s;
    return BlockNode::make(block->name, block->iter_vars, std::move(reads), std::move(writes), block->body,
                           block->init, std::move(allocs), block->annotations);
  }

 private:
  const std::unordered_map<const BufferNode*, Buffer>& subst_;
};

class AllRealizeCollector : public StmtVisitor {
 public:
  std::vector<const BlockRealizeNode*> result;

 protected:
  void visit_(const BlockRealizeNode* op) override {
    result.push_back(op);
    StmtVisitor::visit_(op);
  }
};

}  // namespace

Stmt replace_buffers(const Stmt& s, const std::unordered_map<const BufferNode*, Buffer>& subst) {
  if (!s.defined() || subst.empty()) return s;
  BufferReplacer replacer(subst);
  return replacer.visit(s);
}

std::vector<const BlockRealizeNode*> all_block_realizes(const PrimFunc& func) {
  AllRealizeCollector collector;
  collector.visit(func->body);
  return collector.result;
}

std::string fresh_block_name(const PrimFunc& func, const std::string& base) {
  std::unordered_set<std::string> taken;
  for (const Param& p : func->params) taken.insert(p.buffer->name);
  for (const BlockRealizeNode* r : all_block_realizes(func)) {
    taken.insert(r->block->name);
    for (const Buffer& b : r->block->alloc_buffers) taken.insert(b->name);
  }
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

bool dropped_guards_hold(const Expr& predicate, const std::vector<const ForNode*>& dropped, const Analyzer& analyzer) {
  if (!predicate.defined()) return true;
  if (const auto* a = predicate.as<AndNode>()) {
    return dropped_guards_hold(a->a, dropped, analyzer) && dropped_guards_hold(a->b, dropped, analyzer);
  }
  std::vector<const VarNode*> vars;
  std::unordered_map<const VarNode*, Expr> at_start;
  for (const ForNode* l : dropped) {
    vars.push_back(l->loop_var.get());
    at_start[l->loop_var.get()] = l->min;
  }
  if (!uses_any_var(predicate, vars)) return true;
  return analyzer.can_prove(ir::substitute(predicate, at_start));
}

Expr kept_conjuncts(const Expr& predicate, const std::vector<const VarNode*>& dropped) {
  if (!predicate.defined()) return predicate;
  if (const auto* a = predicate.as<AndNode>()) {
    Expr lhs = kept_conjuncts(a->a, dropped);
    Expr rhs = kept_conjuncts(a->b, dropped);
    if (is_const_int(lhs, 1)) return rhs;
    if (is_const_int(rhs, 1)) return lhs;
    return lhs && rhs;
  }
  return uses_any_var(predicate, dropped) ? make_bool(true) : predicate;
}

}  // namespace dragon::schedule::detail
