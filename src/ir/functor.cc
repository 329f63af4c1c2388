// Default traversal of the recursive visitors and mutators.
#include "dragon/ir/functor.h"

namespace dragon::ir {

bool ExprMutator::visit_all(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (const Expr& e : in) {
    out.push_back(visit(e));
    changed |= !out.back().same_as(e);
  }
  return changed;
}

Expr ExprMutator::visit_(const NotNode* op) {
  Expr a = visit(op->a);
  return a.same_as(op->a) ? Expr(op) : NotNode::make(std::move(a));
}

Expr ExprMutator::visit_(const SelectNode* op) {
  Expr c = visit(op->condition);
  Expr t = visit(op->true_value);
  Expr f = visit(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return Expr(op);
  return SelectNode::make(std::move(c), std::move(t), std::move(f));
}

Expr ExprMutator::visit_(const CastNode* op) {
  Expr v = visit(op->value);
  return v.same_as(op->value) ? Expr(op) : CastNode::make(op->dtype, std::move(v));
}

Expr ExprMutator::visit_(const CallNode* op) {
  std::vector<Expr> args;
  if (!visit_all(op->args, args)) return Expr(op);
  return CallNode::make(op->op, std::move(args));
}

Expr ExprMutator::visit_(const BufferLoadNode* op) {
  std::vector<Expr> indices;
  if (!visit_all(op->indices, indices)) return Expr(op);
  return BufferLoadNode::make(op->buffer, std::move(indices));
}

void StmtVisitor::visit_(const ForNode* op) {
  visit_expr(op->min);
  visit_expr(op->extent);
  visit(op->body);
}

void StmtVisitor::visit_(const BlockNode* op) {
  for (const IterVar& iv : op->iter_vars) visit_range(iv.dom);
  for (const BufferRegion& r : op->reads) {
    for (const Range& range : r.region) visit_range(range);
  }
  for (const BufferRegion& r : op->writes) {
    for (const Range& range : r.region) visit_range(range);
  }
  if (op->init.defined()) visit(op->init);
  visit(op->body);
}

void StmtVisitor::visit_(const BlockRealizeNode* op) {
  for (const Expr& v : op->iter_values) visit_expr(v);
  visit_expr(op->predicate);
  visit(Stmt(op->block.get()));
}

void StmtVisitor::visit_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) visit(s);
}

void StmtVisitor::visit_(const IfThenElseNode* op) {
  visit_expr(op->condition);
  visit(op->then_case);
  if (op->else_case.defined()) visit(op->else_case);
}

void StmtVisitor::visit_(const BufferStoreNode* op) {
  visit_expr(op->value);
  for (const Expr& index : op->indices) visit_expr(index);
}

void StmtVisitor::visit_(const AllocateNode* op) { visit(op->body); }

void StmtVisitor::visit_(const EvaluateNode* op) { visit_expr(op->value); }

Range StmtMutator::mutate_range(const Range& r) {
  Expr min = mutate_expr(r.min);
  Expr extent = mutate_expr(r.extent);
  if (min.same_as(r.min) && extent.same_as(r.extent)) return r;
  return Range{std::move(min), std::move(extent)};
}

std::vector<BufferRegion> StmtMutator::mutate_regions(const std::vector<BufferRegion>& regions, bool& changed) {
  std::vector<BufferRegion> result;
  result.reserve(regions.size());
  for (const BufferRegion& r : regions) {
    BufferRegion out{r.buffer, {}};
    for (const Range& range : r.region) {
      out.region.push_back(mutate_range(range));
      changed |= !out.region.back().min.same_as(range.min) || !out.region.back().extent.same_as(range.extent);
    }
    result.push_back(std::move(out));
  }
  return result;
}

Stmt StmtMutator::visit_(const ForNode* op) {
  Expr min = mutate_expr(op->min);
  Expr extent = mutate_expr(op->extent);
  Stmt body = visit(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return Stmt(op);
  return ForNode::make(op->loop_var, std::move(min), std::move(extent), op->for_kind, std::move(body), op->thread_tag,
                       op->annotations);
}

Stmt StmtMutator::visit_(const BlockNode* op) {
  bool changed = false;
  std::vector<IterVar> iter_vars;
  iter_vars.reserve(op->iter_vars.size());
  for (const IterVar& iv : op->iter_vars) {
    Range dom = mutate_range(iv.dom);
    changed |= !dom.min.same_as(iv.dom.min) || !dom.extent.same_as(iv.dom.extent);
    iter_vars.push_back(IterVar{iv.var, std::move(dom), iv.kind});
  }
  std::vector<BufferRegion> reads = mutate_regions(op->reads, changed);
  std::vector<BufferRegion> writes = mutate_regions(op->writes, changed);
  Stmt init = op->init.defined() ? visit(op->init) : Stmt();
  Stmt body = visit(op->body);
  changed |= !init.same_as(op->init) || !body.same_as(op->body);
  if (!changed) return Stmt(op);
  return BlockNode::make(op->name, std::move(iter_vars), std::move(reads), std::move(writes), std::move(body),
                         std::move(init), op->alloc_buffers, op->annotations);
}

Stmt StmtMutator::visit_(const BlockRealizeNode* op) {
  std::vector<Expr> values;
  bool changed = false;
  values.reserve(op->iter_values.size());
  for (const Expr& v : op->iter_values) {
    values.push_back(mutate_expr(v));
    changed |= !values.back().same_as(v);
  }
  Expr predicate = mutate_expr(op->predicate);
  Stmt block = visit(Stmt(op->block.get()));
  changed |= !predicate.same_as(op->predicate) || !block.same_as(Stmt(op->block.get()));
  if (!changed) return Stmt(op);
  const auto* new_block = block.as<BlockNode>();
  DRAGON_CHECK(new_block != nullptr, "a block was mutated into a {}", node_kind_name(block.kind()));
  return BlockRealizeNode::make(std::move(values), std::move(predicate), Block(new_block));
}

Stmt StmtMutator::visit_(const SeqStmtNode* op) {
  std::vector<Stmt> seq;
  bool changed = false;
  seq.reserve(op->seq.size());
  for (const Stmt& s : op->seq) {
    seq.push_back(visit(s));
    changed |= !seq.back().same_as(s);
  }
  if (!changed) return Stmt(op);
  return SeqStmtNode::make(std::move(seq));
}

Stmt StmtMutator::visit_(const IfThenElseNode* op) {
  Expr condition = mutate_expr(op->condition);
  Stmt then_case = visit(op->then_case);
  Stmt else_case = op->else_case.defined() ? visit(op->else_case) : Stmt();
  if (condition.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) {
    return Stmt(op);
  }
  return IfThenElseNode::make(std::move(condition), std::move(then_case), std::move(else_case));
}

Stmt StmtMutator::visit_(const BufferStoreNode* op) {
  Expr value = mutate_expr(op->value);
  std::vector<Expr> indices;
  bool changed = !value.same_as(op->value);
  indices.reserve(op->indices.size());
  for (const Expr& index : op->indices) {
    indices.push_back(mutate_expr(index));
    changed |= !indices.back().same_as(index);
  }
  if (!changed) return Stmt(op);
  return BufferStoreNode::make(op->buffer, std::move(value), std::move(indices));
}

Stmt StmtMutator::visit_(const AllocateNode* op) {
  Stmt body = visit(op->body);
  return body.same_as(op->body) ? Stmt(op) : AllocateNode::make(op->buffer, std::move(body));
}

Stmt StmtMutator::visit_(const EvaluateNode* op) {
  Expr value = mutate_expr(op->value);
  return value.same_as(op->value) ? Stmt(op) : EvaluateNode::make(std::move(value));
}

}  // namespace dragon::ir
