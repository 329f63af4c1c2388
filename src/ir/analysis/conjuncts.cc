// ir/conjuncts.h.
#include "dragon/ir/conjuncts.h"

#include "dragon/ir/op.h"

namespace dragon::ir {

std::vector<Expr> split_conjuncts(const Expr& condition) {
  if (const auto* n = condition.as<AndNode>()) {
    std::vector<Expr> out = split_conjuncts(n->a);
    std::vector<Expr> b = split_conjuncts(n->b);
    out.insert(out.end(), b.begin(), b.end());
    return out;
  }
  return {condition};
}

Expr conjunction(const std::vector<Expr>& conditions) {
  if (conditions.empty()) return make_bool(true);
  Expr out = conditions.front();
  for (size_t i = 1; i < conditions.size(); ++i) out = out && conditions[i];
  return out;
}

}  // namespace dragon::ir
