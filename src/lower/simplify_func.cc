// simplify_func: simplifies every expression (with the ranges of the loops around it) and
// drops statements that do nothing: loops of extent 0, if(false), constants evaluated for
// nothing, and what they leave empty. Run between passes. Not loop elimination.
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

// A statement that does nothing, and the test for one. A sequence cannot be empty, so
// a statement whose every part vanished becomes this.
ir::Stmt no_op() { return ir::EvaluateNode::make(ir::make_zero(ir::DataType::i32())); }
bool is_no_op(const ir::Stmt& s) {
  const auto* eval = s.as<ir::EvaluateNode>();
  return eval != nullptr && (eval->value.as<ir::IntImmNode>() || eval->value.as<ir::FloatImmNode>());
}

class DeadStatementRemover : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    if (ir::is_const_int(op->extent, 0)) return no_op();
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    // A loop kept only for its annotations (tensor_intrin) stays even when empty.
    if (is_no_op(visited.as<ir::ForNode>()->body) && op->annotations.empty()) return no_op();
    return visited;
  }

  ir::Stmt visit_(const ir::IfThenElseNode* op) override {
    if (auto known = ir::as_const_int(op->condition)) {
      if (*known != 0) return visit(op->then_case);
      return op->else_case.defined() ? visit(op->else_case) : no_op();
    }
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    const auto* branch = visited.as<ir::IfThenElseNode>();
    bool else_empty = !branch->else_case.defined() || is_no_op(branch->else_case);
    if (is_no_op(branch->then_case) && else_empty) return no_op();
    if (branch->else_case.defined() && is_no_op(branch->else_case)) {
      return ir::IfThenElseNode::make(branch->condition, branch->then_case);
    }
    return visited;
  }

  ir::Stmt visit_(const ir::SeqStmtNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    const auto* seq = visited.as<ir::SeqStmtNode>();
    if (seq == nullptr) return visited;
    std::vector<ir::Stmt> kept;
    for (const ir::Stmt& s : seq->seq) {
      if (!is_no_op(s)) kept.push_back(s);
    }
    if (kept.size() == seq->seq.size()) return visited;
    return kept.empty() ? no_op() : ir::SeqStmtNode::make(std::move(kept));
  }

  ir::Stmt visit_(const ir::AllocateNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    return is_no_op(visited.as<ir::AllocateNode>()->body) ? no_op() : visited;
  }
};

}  // namespace

ir::PrimFunc simplify_func(const ir::PrimFunc& func) {
  ir::Stmt body = DeadStatementRemover().visit(ir::simplify(func->body));
  return func.with_body(std::move(body));
}

}  // namespace dragon::lower
