// Integer Add, Sub and Mul simplified a chain at a time. Node by node, every level of a
// sum of n terms rebuilt its affine form from the whole subtree below it, merged it,
// printed it back as nodes and compared it with the original: O(n^2) nodes made and
// walked per sum, the simplifier's largest cost in lowering and code generation. Here
// each level's form is combined from its operands' forms, with the one thing the old
// round trip through nodes did to them, and nodes are made once, at the top. The result
// is the node-by-node result, node for node (tests/unit/ir/test_simplify.cc,
// SimplifyProperty.WholeChainsSimplifyAsNodeByNode, compares both on random expressions).
#include <optional>
#include <utility>

#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir::simplify_detail {
namespace {

struct Operands {
  const Expr& a;
  const Expr& b;
};

Operands operands_of(const Expr& e) {
  if (const auto* add = e.as<AddNode>()) return {add->a, add->b};
  if (const auto* sub = e.as<SubNode>()) return {sub->a, sub->b};
  const auto* mul = e.as<MulNode>();
  return {mul->a, mul->b};
}

}  // namespace

// An operand as its parent level reads it: the form of its simplified expression and,
// for an operand that is not itself a chain, that expression (a chain's is its form
// printed).
struct ExprSimplifier::OperandForm {
  LinearForm form;
  Expr printed;

  std::optional<Expr> expr() const { return printed.defined() ? std::optional<Expr>(printed) : form.to_expr(); }
};

std::optional<ExprSimplifier::OperandForm> ExprSimplifier::operand_form(const Expr& operand) {
  if (is_int_arith(operand)) {
    std::optional<LinearForm> form = chain_form(operand);
    if (!form) return std::nullopt;
    // What the parent read back from the printed form: to_expr writes the positive terms
    // first and the subtracted ones after them, each in form order.
    form->order_positive_terms_first();
    return OperandForm{std::move(*form), Expr()};
  }
  Expr simplified = visit(operand);
  std::optional<LinearForm> form = LinearForm::from_expr(simplified);
  if (!form) return std::nullopt;
  return OperandForm{std::move(*form), std::move(simplified)};
}

// The merged form of the node-by-node result of `e` (an integer Add, Sub or Mul), before
// it is printed; nullopt where that result is not its form printed (a coefficient or
// constant that does not fit the type, an overflow): then the chain goes node by node.
std::optional<LinearForm> ExprSimplifier::chain_form(const Expr& e) {
  const Operands operands = operands_of(e);
  std::optional<OperandForm> a = operand_form(operands.a);
  if (!a) return std::nullopt;
  std::optional<OperandForm> b = operand_form(operands.b);
  if (!b) return std::nullopt;
  LinearForm& form = a->form;  // becomes this level's form
  switch (e.kind()) {
    case NodeKind::Add:
      if (!form.add(b->form, 1)) return std::nullopt;
      break;
    case NodeKind::Sub:
      if (!form.add(b->form, -1)) return std::nullopt;
      break;
    default:
      // As from_expr reads a product: a constant factor scales the other side; two
      // non-constant sides are one term, the product of the two simplified operands.
      if (b->form.is_constant()) {
        if (!form.scale(b->form.constant())) return std::nullopt;
      } else if (form.is_constant()) {
        if (!b->form.scale(form.constant())) return std::nullopt;
        form = std::move(b->form);
      } else {
        std::optional<Expr> pa = a->expr(), pb = b->expr();
        if (!pa || !pb) return std::nullopt;
        LinearForm product(e.dtype());
        if (!product.add_term(MulNode::make(std::move(*pa), std::move(*pb)), 1)) return std::nullopt;
        form = std::move(product);
      }
  }
  if (!form.merge_div_mod_pairs() || !form.fits_type()) return std::nullopt;
  return std::move(form);
}

std::optional<Expr> ExprSimplifier::simplify_chain(const Expr& e) {
  std::optional<LinearForm> form = chain_form(e);
  if (!form) return std::nullopt;
  Expr result = *form->to_expr();  // fits_type held
  return deep_equal(result, e) ? e : result;
}

}  // namespace dragon::ir::simplify_detail
