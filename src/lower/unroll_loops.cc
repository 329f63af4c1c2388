// unroll_loops: under a loop annotated pragma_auto_unroll_max_step = N (consumed), serial
// loops of constant extent whose nest runs at most N innermost statements become unrolled
// loops; explicit unrolls stay. Either way no nest past kMaxUnrolledSteps is unrolled (its
// inner loops still may be). Not a code duplicator: emitters unroll kUnrolled loops.
#include <algorithm>
#include <limits>
#include <optional>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";
constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
// A nest past this many innermost statements stays a loop whatever was asked. ptxas time
// grows much faster than the body: a relu nest of independent loads and stores, fully
// unrolled, took NVRTC 1.2 s at 256 statements, 5 s at 512, 34 s at 1024 and over 100 s at
// 16384 (a random schedule's explicit unroll), and a search must not stall on one
// candidate. MetaSchedule samples auto-unroll steps up to 1024 on CUDA; under this cap such
// a nest keeps its outer loop and unrolls the parts of at most 512 statements inside.
constexpr int64_t kMaxUnrolledSteps = 512;

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kUnbounded / b ? kUnbounded : a * b;
}

// How many innermost statements a statement runs: loops multiply, sequences add. A
// loop of unknown extent counts as unbounded (never unrolled, nor anything around it).
int64_t steps(const ir::Stmt& s) {
  if (const auto* loop = s.as<ir::ForNode>()) {
    std::optional<int64_t> extent = ir::as_const_int(loop->extent);
    return extent ? saturating_mul(*extent, steps(loop->body)) : kUnbounded;
  }
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    int64_t total = 0;
    for (const ir::Stmt& part : seq->seq) total = std::min(kUnbounded - 1, total + steps(part));
    return total;
  }
  if (const auto* branch = s.as<ir::IfThenElseNode>()) {
    return std::max(steps(branch->then_case), branch->else_case.defined() ? steps(branch->else_case) : 0);
  }
  if (const auto* alloc = s.as<ir::AllocateNode>()) return steps(alloc->body);
  return 1;
}

class AutoUnroller : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    std::optional<int64_t> saved = max_step_;
    ir::Annotations annotations = op->annotations;
    if (auto it = annotations.find(kAutoUnrollMaxStep); it != annotations.end()) {
      const auto* step = std::get_if<int64_t>(&it->second);
      DRAGON_CHECK(step != nullptr, "loop '{}': {} is not an integer", op->loop_var.name(), kAutoUnrollMaxStep);
      max_step_ = *step;
      annotations.erase(it);
    }
    ir::ForKind kind = op->for_kind;
    const int64_t nest_steps = steps(ir::Stmt(op));
    if (kind == ir::ForKind::kUnrolled && nest_steps > kMaxUnrolledSteps) kind = ir::ForKind::kSerial;
    if (max_step_ && kind == ir::ForKind::kSerial && ir::as_const_int(op->extent) &&
        nest_steps <= std::min(*max_step_, kMaxUnrolledSteps)) {
      kind = ir::ForKind::kUnrolled;
    }
    ir::Stmt body = visit(op->body);
    max_step_ = saved;
    if (body.same_as(op->body) && kind == op->for_kind && annotations.size() == op->annotations.size()) {
      return ir::Stmt(op);
    }
    return ir::ForNode::make(op->loop_var, op->min, op->extent, kind, std::move(body), op->thread_tag,
                             std::move(annotations));
  }

 private:
  std::optional<int64_t> max_step_;  // of the innermost annotated loop around
};

}  // namespace

ir::PrimFunc unroll_loops(const ir::PrimFunc& func) {
  return func.with_body(AutoUnroller().visit(func->body));
}

}  // namespace dragon::lower
