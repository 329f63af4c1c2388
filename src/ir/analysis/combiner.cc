// ir/combiner.h.
#include "dragon/ir/combiner.h"

#include "dragon/ir/op.h"

namespace dragon::ir {

Expr combine(Combiner combiner, Expr a, Expr b) {
  switch (combiner) {
    case Combiner::kAdd: return std::move(a) + std::move(b);
    case Combiner::kMul: return std::move(a) * std::move(b);
    case Combiner::kMax: return max(std::move(a), std::move(b));
    case Combiner::kMin: return min(std::move(a), std::move(b));
  }
  return {};
}

Expr combiner_identity(Combiner combiner, DataType type) {
  switch (combiner) {
    case Combiner::kAdd: return make_zero(type);
    case Combiner::kMul: return make_one(type);
    case Combiner::kMax: return min_value(type);
    case Combiner::kMin: return max_value(type);
  }
  return {};
}

std::optional<Combination> as_combination(const Expr& value) {
  if (const auto* n = value.as<AddNode>()) return Combination{Combiner::kAdd, n->a, n->b};
  if (const auto* n = value.as<MulNode>()) return Combination{Combiner::kMul, n->a, n->b};
  if (const auto* n = value.as<MaxNode>()) return Combination{Combiner::kMax, n->a, n->b};
  if (const auto* n = value.as<MinNode>()) return Combination{Combiner::kMin, n->a, n->b};
  return std::nullopt;
}

}  // namespace dragon::ir
