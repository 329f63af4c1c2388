// const_int_bound: interval arithmetic over the expression tree. Variables take their
// bound range or their type's; loads and anything unknown take their type's values.
#include "const_int_bound.h"

#include "dragon/ir/functor.h"

namespace dragon::ir::simplify_detail {
namespace {

class BoundEvaluator : public ExprFunctor<Interval> {
 public:
  explicit BoundEvaluator(const Analyzer& analyzer) : analyzer_(analyzer) {}

  // The values `e` takes where it does not overflow, which lie in its type.
  Interval bound(const Expr& e) { return intersect(visit(e), Interval::of_type(e.dtype())); }
  Interval term_bound(const Expr& e) { return ring_operand(e); }

 protected:
  Interval visit_(const IntImmNode* op) override { return Interval::point(op->value); }
  Interval visit_(const FloatImmNode*) override { return Interval::everything(); }
  Interval visit_(const VarNode* op) override {
    if (auto r = analyzer_.var_bound(op)) return Interval::make(r->first, r->second);
    return Interval::of_type(op->dtype);
  }
  Interval visit_(const AddNode* op) override { return ring_op(op, [](auto a, auto b) { return add(a, b); }); }
  Interval visit_(const SubNode* op) override { return ring_op(op, [](auto a, auto b) { return sub(a, b); }); }
  Interval visit_(const MulNode* op) override { return ring_op(op, [](auto a, auto b) { return mul(a, b); }); }
  Interval visit_(const DivNode* op) override { return int_op(op, [](auto a, auto b) { return truncdiv(a, b); }); }
  Interval visit_(const ModNode* op) override { return int_op(op, [](auto a, auto b) { return truncmod(a, b); }); }
  Interval visit_(const FloorDivNode* op) override {
    return int_op(op, [](auto a, auto b) { return floordiv(a, b); });
  }
  Interval visit_(const FloorModNode* op) override {
    return int_op(op, [](auto a, auto b) { return floormod(a, b); });
  }
  Interval visit_(const MinNode* op) override { return int_op(op, [](auto a, auto b) { return min(a, b); }); }
  Interval visit_(const MaxNode* op) override { return int_op(op, [](auto a, auto b) { return max(a, b); }); }
  Interval visit_(const EQNode*) override { return {0, 1}; }
  Interval visit_(const NENode*) override { return {0, 1}; }
  Interval visit_(const LTNode*) override { return {0, 1}; }
  Interval visit_(const LENode*) override { return {0, 1}; }
  Interval visit_(const GTNode*) override { return {0, 1}; }
  Interval visit_(const GENode*) override { return {0, 1}; }
  Interval visit_(const AndNode*) override { return {0, 1}; }
  Interval visit_(const OrNode*) override { return {0, 1}; }
  Interval visit_(const NotNode*) override { return {0, 1}; }
  Interval visit_(const SelectNode* op) override {
    if (!op->dtype.is_int() && !op->dtype.is_bool()) return Interval::everything();
    return hull(bound(op->true_value), bound(op->false_value));
  }
  Interval visit_(const CastNode* op) override {
    DataType from = op->value.dtype();
    if (!(op->dtype.is_int() || op->dtype.is_bool())) return Interval::everything();
    if (from.is_bool()) return {0, 1};
    if (!from.is_int() || op->dtype.is_bool()) return Interval::of_type(op->dtype);
    // A value that fits the target survives the conversion; otherwise it wraps.
    Interval v = bound(op->value);
    return v.within(Interval::of_type(op->dtype)) ? v : Interval::of_type(op->dtype);
  }
  Interval visit_(const CallNode* op) override {
    if (op->op == Intrinsic::Abs && op->dtype.is_int()) {
      Interval v = bound(op->args[0]);
      if (v.min >= 0) return v;
      if (v.max <= 0) return scale(v, -1);
      return Interval::make(0, std::max(scale(v, -1).max, v.max));
    }
    return Interval::of_type(op->dtype);
  }
  Interval visit_(const BufferLoadNode* op) override { return Interval::of_type(op->dtype); }

 private:
  template <typename Node, typename F>
  Interval int_op(const Node* op, F f) {
    if (!op->dtype.is_int()) return Interval::everything();
    return f(bound(op->a), bound(op->b));
  }

  // +, - and * wrap in two's complement, and the simplifier may regroup a sum so that an
  // inner partial sum wraps while the whole does not. So a +, -, * operand is bounded by
  // its exact value, never clamped to the type: only the top of such a chain is a value
  // that other operators (and clamping) see.
  template <typename Node, typename F>
  Interval ring_op(const Node* op, F f) {
    if (!op->dtype.is_int()) return Interval::everything();
    return f(ring_operand(op->a), ring_operand(op->b));
  }
  // The bound of `e` as an operand of +, - or *.
  Interval ring_operand(const Expr& e) {
    NodeKind k = e.kind();
    return k == NodeKind::Add || k == NodeKind::Sub || k == NodeKind::Mul ? visit(e) : bound(e);
  }

  const Analyzer& analyzer_;
};

}  // namespace

Interval bound_of(const Expr& e, const Analyzer& analyzer) { return BoundEvaluator(analyzer).bound(e); }

Interval bound_of(const LinearForm& form, const Analyzer& analyzer) {
  Interval r = Interval::point(form.constant());
  BoundEvaluator evaluator(analyzer);
  for (const LinearTerm& t : form.terms()) r = add(r, scale(evaluator.term_bound(t.term), t.coeff));
  return r;
}

}  // namespace dragon::ir::simplify_detail

namespace dragon::ir {

ConstIntBound Analyzer::const_int_bound(const Expr& e) const {
  using simplify_detail::Interval;
  Interval r = simplify_detail::bound_of(e, *this);
  ConstIntBound result;
  if (r.min != Interval::kNegInf) result.min = r.min;
  if (r.max != Interval::kPosInf) result.max = r.max;
  return result;
}

}  // namespace dragon::ir
