// The canonical affine form of an integer expression: sum of coefficient * term plus a
// constant, terms in order of first appearance. Coefficients are exact; a form whose
// arithmetic would overflow int64 is refused. Not a polynomial: products of two
// non-constant factors are single terms.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dragon/ir/expr.h"

namespace dragon::ir::simplify_detail {

struct LinearTerm {
  Expr term;
  int64_t coeff = 0;
};

class LinearForm {
 public:
  explicit LinearForm(DataType dtype) : dtype_(dtype) {}

  // The form of a scalar integer expression; nullopt for other types or on overflow.
  static std::optional<LinearForm> from_expr(const Expr& e);

  DataType dtype() const { return dtype_; }
  const std::vector<LinearTerm>& terms() const { return terms_; }
  int64_t constant() const { return constant_; }
  bool is_constant() const { return terms_.empty(); }

  // this += other * factor; false (and this unspecified) on overflow.
  [[nodiscard]] bool add(const LinearForm& other, int64_t factor);
  [[nodiscard]] bool add_term(const Expr& term, int64_t coeff);
  [[nodiscard]] bool add_constant(int64_t value);
  [[nodiscard]] bool scale(int64_t factor);

  // Replaces c * floordiv(e, c) + floormod(e, c) (and the truncating pair) by e, times any
  // common factor; false on overflow.
  [[nodiscard]] bool merge_div_mod_pairs();

  // Rebuilds an expression; nullopt when a coefficient or the constant does not fit the type.
  std::optional<Expr> to_expr() const;
  // Whether to_expr succeeds.
  bool fits_type() const;
  // The terms with positive coefficients first, each group in its order: the order in
  // which from_expr reads back what to_expr wrote.
  void order_positive_terms_first();

 private:
  // Terms i and j (distinct) replaced by replacement * factor; false (and this unchanged)
  // on overflow.
  [[nodiscard]] bool replace_pair(size_t i, size_t j, const LinearForm& replacement, int64_t factor);

  DataType dtype_;
  std::vector<LinearTerm> terms_;
  int64_t constant_ = 0;
};

}  // namespace dragon::ir::simplify_detail
