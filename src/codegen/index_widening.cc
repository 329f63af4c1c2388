// widen_index_casts (index_widening.h). Exactness: an i32 operation whose exact result lies
// in i32 gives that result in i32 too, and a leaf (variable, load, call) has the same
// value in either width; so when every operation of e provably stays inside i32, i64(e)
// equals e computed in i64 operation by operation. Lowering keeps a dimension's index in
// i32 only when it fits (flatten_buffers, verify_index_widths), but that is its promise,
// not a proof here: each operation's range is checked with the analyzer, and a cast whose
// operand might wrap is left alone (its access is then refused as before, never planned
// with a wrong offset).
#include "index_widening.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"

namespace dragon::codegen {
namespace {

class CastWidener final : public ir::ExprMutator {
 public:
  explicit CastWidener(const ir::Analyzer& analyzer) : analyzer_(analyzer) {}

 protected:
  using ir::ExprMutator::visit_;
  ir::Expr visit_(const ir::CastNode* op) override {
    ir::Expr value = visit(op->value);
    if (op->dtype == ir::DataType::i64() && value.dtype() == ir::DataType::i32()) {
      if (std::optional<ir::Expr> wide = in_i64(value)) return *wide;
    }
    return value.same_as(op->value) ? ir::Expr(op) : ir::cast(op->dtype, value);
  }

 private:
  // `e` (i32) computed in i64, or nullopt when one of its operations may leave i32.
  std::optional<ir::Expr> in_i64(const ir::Expr& e) const {
    const ir::DataType i64 = ir::DataType::i64();
    if (const auto* imm = e.as<ir::IntImmNode>()) return ir::IntImmNode::make(i64, imm->value);
    switch (e.kind()) {
#define DRAGON_WIDEN(Name)                                              \
  case ir::NodeKind::Name: {                                            \
    const auto* op = e.as<ir::Name##Node>();                            \
    if (!stays_in_i32(e)) return std::nullopt;                          \
    std::optional<ir::Expr> a = in_i64(op->a), b = in_i64(op->b);      \
    if (!a || !b) return std::nullopt;                                  \
    return ir::Name##Node::make(std::move(*a), std::move(*b));          \
  }
      DRAGON_WIDEN(Add)
      DRAGON_WIDEN(Sub)
      DRAGON_WIDEN(Mul)
      DRAGON_WIDEN(Div)
      DRAGON_WIDEN(Mod)
      DRAGON_WIDEN(FloorDiv)
      DRAGON_WIDEN(FloorMod)
      DRAGON_WIDEN(Min)
      DRAGON_WIDEN(Max)
#undef DRAGON_WIDEN
      default:
        // A leaf of the arithmetic: its value does not depend on the width it is used in.
        return ir::cast(i64, e);
    }
  }

  // The analyzer's bound is the exact range cut to the type, so a range that reaches a
  // limit of i32 may hide a wrap: only a range strictly inside counts.
  bool stays_in_i32(const ir::Expr& e) const {
    ir::ConstIntBound b = analyzer_.const_int_bound(e);
    return b.min && b.max && *b.min > std::numeric_limits<int32_t>::min() &&
           *b.max < std::numeric_limits<int32_t>::max();
  }

  const ir::Analyzer& analyzer_;
};

}  // namespace

ir::Expr widen_index_casts(const ir::Expr& index, const ir::Analyzer& analyzer) {
  return CastWidener(analyzer).visit(index);
}

}  // namespace dragon::codegen
