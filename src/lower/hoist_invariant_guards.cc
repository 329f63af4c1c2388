// hoist_invariant_guards: a loop whose whole body is `if (c) S` with conjuncts of c that
// the loop does not change becomes `if (those) for { if (the rest) S }`. Lowering guards a
// block whose split does not divide its extent inside every loop of its nest, and a guard
// inside the loop that accumulates made NVCC keep the accumulator in memory: a sum over
// 4096 terms per thread (KernelBench 47's best record) loaded and stored its partial sum
// every term, 10.25 ms against the 3.02 ms it ran in when indices were printed inside the
// guard. With the guard outside, the accumulator's address is read and written on every
// iteration and NVCC keeps it in a register.
//
// A conjunct is invariant when it uses neither the loop's variable nor memory (a load may
// read what S or another thread writes between iterations) nor a call. Every thread runs
// the same statements either way, barriers included: it runs last, after the barriers are
// placed, so none lands under the hoisted condition that would have been outside it.
// Serial, unrolled and vectorized loops. A vectorized loop's lanes are one thread's, and
// the code generator makes one vector access only of a loop whose body is a bare store:
// an elementwise nest's bounds guard (a grid-stride split that does not divide it) inside
// its lanes left every f32x4 kernel scalar, four loads and four stores a thread.
#include <vector>

#include "dragon/ir/conjuncts.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/uses_var.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

// Whether `e` reads memory or calls anything.
class ReadsMemory : public ir::ExprVisitor {
 public:
  bool found = false;

 protected:
  using ir::ExprVisitor::visit_;
  void visit_(const ir::BufferLoadNode*) override { found = true; }
  void visit_(const ir::CallNode*) override { found = true; }
};

bool invariant_in(const ir::Expr& condition, const ir::ForNode* loop) {
  if (ir::uses_var(condition, loop->loop_var.get())) return false;
  ReadsMemory reads;
  reads.visit(condition);
  return !reads.found;
}

class GuardHoister : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);  // inner loops first: guards bubble out
    const auto* loop = visited.as<ir::ForNode>();
    if (loop == nullptr || (loop->for_kind != ir::ForKind::kSerial && loop->for_kind != ir::ForKind::kUnrolled &&
                            loop->for_kind != ir::ForKind::kVectorized)) {
      return visited;
    }
    const auto* guard = loop->body.as<ir::IfThenElseNode>();
    if (guard == nullptr || guard->else_case.defined()) return visited;
    std::vector<ir::Expr> outside, inside;
    for (const ir::Expr& c : ir::split_conjuncts(guard->condition)) (invariant_in(c, loop) ? outside : inside).push_back(c);
    if (outside.empty()) return visited;
    ir::Stmt body = inside.empty() ? guard->then_case : ir::IfThenElseNode::make(ir::conjunction(inside), guard->then_case);
    ir::Stmt rebuilt = ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, std::move(body),
                                         loop->thread_tag, loop->annotations);
    return ir::IfThenElseNode::make(ir::conjunction(outside), std::move(rebuilt));
  }
};

}  // namespace

ir::PrimFunc hoist_invariant_guards(const ir::PrimFunc& func) {
  return func.with_body(GuardHoister().visit(func->body));
}

}  // namespace dragon::lower
