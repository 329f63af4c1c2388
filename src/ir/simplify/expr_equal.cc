// Deep equality: a pointer match ends the walk early, so comparing a rebuilt expression
// with its source costs little when they share subtrees.
#include "expr_equal.h"

#include <cstring>

namespace dragon::ir::simplify_detail {

bool deep_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || !(a.dtype() == b.dtype())) return false;
  switch (a.kind()) {
    case NodeKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case NodeKind::FloatImm: {
      // Bitwise, so -0.0 and +0.0 differ and NaN equals itself.
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return std::memcmp(&x, &y, sizeof(double)) == 0;
    }
    case NodeKind::Var: return false;  // distinct nodes are distinct variables
#define DRAGON_BINARY_NODE(Name)                                     \
  case NodeKind::Name: {                                             \
    const auto* x = a.as<Name##Node>();                              \
    const auto* y = b.as<Name##Node>();                              \
    return deep_equal(x->a, y->a) && deep_equal(x->b, y->b);         \
  }
#include "dragon/ir/nodes.def"
    case NodeKind::Not: return deep_equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::Select: {
      const auto* x = a.as<SelectNode>();
      const auto* y = b.as<SelectNode>();
      return deep_equal(x->condition, y->condition) && deep_equal(x->true_value, y->true_value) &&
             deep_equal(x->false_value, y->false_value);
    }
    case NodeKind::Cast: return deep_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case NodeKind::Call: {
      const auto* x = a.as<CallNode>();
      const auto* y = b.as<CallNode>();
      if (x->op != y->op || x->args.size() != y->args.size()) return false;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (!deep_equal(x->args[i], y->args[i])) return false;
      }
      return true;
    }
    case NodeKind::BufferLoad: {
      const auto* x = a.as<BufferLoadNode>();
      const auto* y = b.as<BufferLoadNode>();
      if (!x->buffer.same_as(y->buffer) || x->indices.size() != y->indices.size()) return false;
      for (size_t i = 0; i < x->indices.size(); ++i) {
        if (!deep_equal(x->indices[i], y->indices[i])) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace dragon::ir::simplify_detail
