// The simplifier's traversal: simplify operands, apply the node's rules, and hand back the
// original node when the result is the same expression (so unchanged IR stays shared).
#include "rewriter.h"

#include "const_fold.h"
#include "const_int_bound.h"
#include "expr_equal.h"

namespace dragon::ir::simplify_detail {

Expr make_binary(NodeKind kind, Expr a, Expr b) {
  switch (kind) {
#define DRAGON_BINARY_NODE(Name) \
  case NodeKind::Name: return Name##Node::make(std::move(a), std::move(b));
#include "dragon/ir/nodes.def"
    default: DRAGON_UNREACHABLE("{} is not a binary node", node_kind_name(kind));
  }
}

bool is_int_arith(const Expr& e) {
  const NodeKind k = e.kind();
  return (k == NodeKind::Add || k == NodeKind::Sub || k == NodeKind::Mul) && e.dtype().is_int() && e.dtype().is_scalar();
}

Interval ExprSimplifier::bound(const Expr& e) const { return bound_of(e, analyzer_); }
Interval ExprSimplifier::bound(const LinearForm& form) const { return bound_of(form, analyzer_); }

std::optional<Interval> ExprSimplifier::difference_bound(const Expr& a, const Expr& b) const {
  auto fa = LinearForm::from_expr(a);
  auto fb = LinearForm::from_expr(b);
  if (!fa || !fb || !fa->add(*fb, -1) || !fa->merge_div_mod_pairs()) return std::nullopt;
  return bound(*fa);
}

Expr ExprSimplifier::visit_(const VarNode* op) {
  // A variable bound to a single value is that value.
  auto r = analyzer_.var_bound(op);
  if (r && r->first == r->second && r->first >= int_min_value(op->dtype) && r->first <= int_max_value(op->dtype)) {
    return IntImmNode::make(op->dtype, r->first);
  }
  return Expr(op);
}

Expr ExprSimplifier::rewrite_binary(NodeKind kind, const Expr& a, const Expr& b) {
  if (auto folded = fold_binary(kind, a, b)) return *folded;
  switch (kind) {
    case NodeKind::Add:
    case NodeKind::Sub:
    case NodeKind::Mul: return rewrite_arith(kind, a, b);
    case NodeKind::Div: return a.dtype().is_int() ? rewrite_truncdiv(a, b) : rewrite_arith(kind, a, b);
    case NodeKind::Mod: return rewrite_truncmod(a, b);
    case NodeKind::FloorDiv: return rewrite_floordiv(a, b);
    case NodeKind::FloorMod: return rewrite_floormod(a, b);
    case NodeKind::Min:
    case NodeKind::Max: return rewrite_min_max(kind, a, b);
    case NodeKind::And:
    case NodeKind::Or: return rewrite_and_or(kind, a, b);
    default: return rewrite_compare(kind, a, b);
  }
}

#define DRAGON_BINARY_NODE(Name)                                                 \
  Expr ExprSimplifier::visit_(const Name##Node* op) {                            \
    if (whole_chains_ && is_int_arith(Expr(op))) {                               \
      if (std::optional<Expr> chain = simplify_chain(Expr(op))) return *chain;   \
    }                                                                            \
    Expr a = visit(op->a);                                                       \
    Expr b = visit(op->b);                                                       \
    Expr result = rewrite_binary(NodeKind::Name, a, b);                          \
    return deep_equal(result, Expr(op)) ? Expr(op) : result;                     \
  }
#include "dragon/ir/nodes.def"

Expr ExprSimplifier::visit_(const NotNode* op) {
  Expr result = rewrite_not(visit(op->a));
  return deep_equal(result, Expr(op)) ? Expr(op) : result;
}

Expr ExprSimplifier::visit_(const SelectNode* op) {
  Expr result = rewrite_select(visit(op->condition), visit(op->true_value), visit(op->false_value));
  return deep_equal(result, Expr(op)) ? Expr(op) : result;
}

Expr ExprSimplifier::visit_(const CastNode* op) {
  Expr result = rewrite_cast(op->dtype, visit(op->value));
  return deep_equal(result, Expr(op)) ? Expr(op) : result;
}

Expr ExprSimplifier::visit_(const CallNode* op) {
  std::vector<Expr> args;
  for (const Expr& arg : op->args) args.push_back(visit(arg));
  Expr result = rewrite_call(op->op, args);
  return deep_equal(result, Expr(op)) ? Expr(op) : result;
}

}  // namespace dragon::ir::simplify_detail
