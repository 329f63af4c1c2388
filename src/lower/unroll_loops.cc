// unroll_loops: under a loop annotated pragma_auto_unroll_max_step = N (consumed), serial
// loops of constant extent whose nest runs at most N innermost statements become unrolled
// loops; explicit unrolls stay. Either way no nest past kMaxUnrolledSteps statements or
// kMaxUnrolledOperations operations is unrolled (its inner loops still may be). Not a code
// duplicator: emitters unroll kUnrolled loops.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

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
// Nor past this many expression operations, unrolled: what NVRTC's time follows once the
// statements are heavy. An f16 conv's two epilogue kernels, 196 copies each of one store
// whose indices take 26 and 48 operations (8 and 12 of them divisions), added 0.64 s and
// 0.88 s unrolled to a candidate that compiled in 0.19 s with both as loops
// (bench_candidate_compile; about 0.1 ms an unrolled operation). A register tile's loops
// (a GEMM's 8 x 8 x 4 accumulations of about 10 operations) stay inside.
constexpr int64_t kMaxUnrolledOperations = 4096;
constexpr int64_t kTensorizedCallOperations = 16;

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kUnbounded / b ? kUnbounded : a * b;
}

// What NVRTC's time for one unrolled copy of a math call grows by, in operations (NVRTC
// 13.0 on the development VM: a 256-step loop of `s += f(x[i])` fully unrolled, its time
// over the same loop summing x[i], per step, divided by the 0.08 ms an operation of that
// loop costs). The calls expand into subroutines (range reduction, special cases): a loop
// of 256 sinf took 3.4 s, one of expf 0.25 s, one of additions 0.12 s. A float division is
// IEEE division, a subroutine too (12). f64 forms are larger still (exp: 52), counted
// four times their f32 weight. Integer divisions by constants (about 9) are left at 1: the
// cooperative fetches of implicit-GEMM convolutions, full of them, run 1.7x faster
// unrolled (2026-12-05-h100-compile-cost.md), and that budget was tuned with them at 1.
int64_t math_call_operations(ir::Intrinsic op) {
  switch (op) {
    case ir::Intrinsic::Sin:
    case ir::Intrinsic::Cos: return 180;
    case ir::Intrinsic::Pow: return 76;
    case ir::Intrinsic::Log1p: return 30;
    case ir::Intrinsic::Log:
    case ir::Intrinsic::Log2:
    case ir::Intrinsic::Erf:
    case ir::Intrinsic::Expm1: return 24;
    case ir::Intrinsic::Tanh: return 14;
    case ir::Intrinsic::Sqrt: return 13;
    case ir::Intrinsic::Exp: return 7;
    case ir::Intrinsic::Exp2:
    case ir::Intrinsic::Rsqrt: return 3;
    default: return 1;
  }
}

// Operations (every expression node but constants and variables) in one statement, a
// math call or a float division counted by what it expands into.
class OperationCount : public ir::StmtExprVisitor {
 public:
  int64_t count = 0;

 protected:
  using ir::StmtExprVisitor::visit_;
  template <typename Node>
  static int64_t operations_of(const Node*) {
    return 1;
  }
  static int64_t operations_of(const ir::DivNode* op) { return op->dtype.is_float() ? 12 : 1; }
#define DRAGON_BINARY_NODE(Name)               \
  void visit_(const ir::Name##Node* op) override { \
    count += operations_of(op);                \
    ir::ExprVisitor::visit_(op);               \
  }
#include "dragon/ir/nodes.def"
  void visit_(const ir::NotNode* op) override { ++count, ir::ExprVisitor::visit_(op); }
  void visit_(const ir::SelectNode* op) override { ++count, ir::ExprVisitor::visit_(op); }
  void visit_(const ir::CastNode* op) override { ++count, ir::ExprVisitor::visit_(op); }
  void visit_(const ir::CallNode* op) override {
    count += math_call_operations(op->op) * (op->dtype.is_float() && op->dtype.bits() == 64 ? 4 : 1);
    ir::ExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override { ++count, ir::ExprVisitor::visit_(op); }
};

int64_t saturating_add(int64_t a, int64_t b) { return std::min(kUnbounded - 1, a + b); }

}  // namespace

// Loops multiply, sequences add, a branch counts its larger side. A loop of unknown extent
// counts as unbounded (never unrolled, nor anything around it).
UnrolledSize unrolled_size(const ir::Stmt& s) {
  if (const auto* loop = s.as<ir::ForNode>()) {
    // A tensorized tile: the emitter prints one call of an inlined helper for the whole
    // nest, a dozen instructions or more (3xTF32's splits and three mma). An f32 GEMM's
    // k-step of 8 x 52 such calls unrolled took NVRTC 4.2 s (bench_candidate_compile).
    if (loop->annotations.count("tensor_intrin") != 0) return {1, kTensorizedCallOperations};
    std::optional<int64_t> extent = ir::as_const_int(loop->extent);
    if (!extent) return {kUnbounded, kUnbounded};
    UnrolledSize body = unrolled_size(loop->body);
    return {saturating_mul(*extent, body.statements), saturating_mul(*extent, body.operations)};
  }
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    UnrolledSize total;
    for (const ir::Stmt& part : seq->seq) {
      UnrolledSize p = unrolled_size(part);
      total = {saturating_add(total.statements, p.statements), saturating_add(total.operations, p.operations)};
    }
    return total;
  }
  if (const auto* branch = s.as<ir::IfThenElseNode>()) {
    UnrolledSize then_size = unrolled_size(branch->then_case);
    UnrolledSize else_size = branch->else_case.defined() ? unrolled_size(branch->else_case) : UnrolledSize{};
    OperationCount condition;
    condition.visit(branch->condition);
    return {std::max(then_size.statements, else_size.statements),
            saturating_add(condition.count, std::max(then_size.operations, else_size.operations))};
  }
  if (const auto* alloc = s.as<ir::AllocateNode>()) return unrolled_size(alloc->body);
  OperationCount ops;
  ops.visit(s);
  return {1, std::max<int64_t>(1, ops.count)};
}

bool unroll_budget_fits(const UnrolledSize& size) {
  return size.statements <= kMaxUnrolledSteps && size.operations <= kMaxUnrolledOperations;
}

namespace {

class AutoUnroller : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    std::optional<int64_t> saved = max_step_;
    ir::Annotations annotations = op->annotations;
    if (auto it = annotations.find(kAutoUnrollMaxStep); it != annotations.end()) {
      const auto* step = std::get_if<int64_t>(&it->second);
      // A script may annotate any value (a model wrote a string here): bad input, not a bug.
      if (step == nullptr) {
        throw UserError(fmt::format("loop '{}': annotation {} must be an integer, not {}", op->loop_var.name(),
                                    kAutoUnrollMaxStep,
                                    std::holds_alternative<std::string>(it->second)
                                        ? fmt::format("the string \"{}\"", std::get<std::string>(it->second))
                                        : fmt::format("the number {}", std::get<double>(it->second))));
      }
      max_step_ = *step;
      annotations.erase(it);
    }
    ir::ForKind kind = op->for_kind;
    const UnrolledSize nest = unrolled_size(ir::Stmt(op));
    const bool too_big = !unroll_budget_fits(nest);
    if (kind == ir::ForKind::kUnrolled && too_big) kind = ir::ForKind::kSerial;
    if (max_step_ && kind == ir::ForKind::kSerial && ir::as_const_int(op->extent) && !too_big &&
        nest.statements <= *max_step_) {
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
