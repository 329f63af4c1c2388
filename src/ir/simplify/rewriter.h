// The expression simplifier (private): a bottom-up mutator that applies local rules to
// operands that are already simplified. Rule families live in their own files:
// rewrite_arith.cc, rewrite_div_mod.cc, rewrite_compare.cc, rewrite_logic.cc; integer
// chains of Add, Sub and Mul are taken whole (arith_chain.cc), with the same result.
#pragma once

#include "dragon/ir/functor.h"
#include "dragon/ir/simplify.h"
#include "interval.h"
#include "linear_form.h"

namespace dragon::ir::simplify_detail {

// A binary node of `kind` over a and b, without simplification.
Expr make_binary(NodeKind kind, Expr a, Expr b);
// A scalar integer Add, Sub or Mul: what the canonical affine form rewrites.
bool is_int_arith(const Expr& e);

class ExprSimplifier : public ExprMutator {
 public:
  // `whole_chains`: integer Add, Sub and Mul chains in one pass (arith_chain.cc); false
  // goes node by node, the definition the one pass must equal (tests compare them).
  explicit ExprSimplifier(const Analyzer& analyzer, bool whole_chains = true)
      : analyzer_(analyzer), whole_chains_(whole_chains) {}

  Expr simplify(const Expr& e) { return visit(e); }

  // rewrite_arith.cc: Add, Sub, Mul through the affine form; float identities.
  Expr rewrite_arith(NodeKind kind, const Expr& a, const Expr& b);
  // rewrite_div_mod.cc
  Expr rewrite_floordiv(const Expr& a, const Expr& b);
  Expr rewrite_floormod(const Expr& a, const Expr& b);
  Expr rewrite_truncdiv(const Expr& a, const Expr& b);
  Expr rewrite_truncmod(const Expr& a, const Expr& b);
  // rewrite_compare.cc: Min, Max and the comparisons.
  Expr rewrite_min_max(NodeKind kind, const Expr& a, const Expr& b);
  Expr rewrite_compare(NodeKind kind, const Expr& a, const Expr& b);
  // rewrite_logic.cc: And, Or, Not, Select, Cast, Call.
  Expr rewrite_and_or(NodeKind kind, const Expr& a, const Expr& b);
  Expr rewrite_not(const Expr& a);
  Expr rewrite_select(const Expr& condition, const Expr& true_value, const Expr& false_value);
  Expr rewrite_cast(DataType type, const Expr& value);
  Expr rewrite_call(Intrinsic op, const std::vector<Expr>& args);

  // Bounds of a simplified expression, and of a - b computed exactly (nullopt when the
  // difference has no affine form).
  Interval bound(const Expr& e) const;
  Interval bound(const LinearForm& form) const;
  std::optional<Interval> difference_bound(const Expr& a, const Expr& b) const;

 protected:
  Expr visit_(const VarNode* op) override;
#define DRAGON_BINARY_NODE(Name) Expr visit_(const Name##Node* op) override;
#include "dragon/ir/nodes.def"
  Expr visit_(const NotNode* op) override;
  Expr visit_(const SelectNode* op) override;
  Expr visit_(const CastNode* op) override;
  Expr visit_(const CallNode* op) override;

 private:
  Expr rewrite_binary(NodeKind kind, const Expr& a, const Expr& b);
  // Integer Add, Sub and Mul (arith_chain.cc): a whole chain of them in one pass; nullopt
  // where a level's form does not print (an overflow), and the chain goes node by node.
  std::optional<Expr> simplify_chain(const Expr& e);
  struct OperandForm;
  std::optional<LinearForm> chain_form(const Expr& e);
  std::optional<OperandForm> operand_form(const Expr& operand);

  const Analyzer& analyzer_;
  const bool whole_chains_;
};

}  // namespace dragon::ir::simplify_detail
