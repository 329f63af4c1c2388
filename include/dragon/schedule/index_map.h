// IndexMap: a map from a buffer's indices to new indices (transform_layout), written as
// TVM spells it in traces, "lambda i, j: (i // 16, j // 16, i % 16, j % 16)". Affine
// results with floordiv (//) and floormod (%) by positive constants only. Not a general
// expression language and not the IR text format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/expr.h"

namespace dragon::schedule {

class IndexMap {
 public:
  // Parses the lambda text. The body is a tuple "(e0, e1)", a one-element tuple "(e,)"
  // or "(e)", a bare list "e0, e1", or "()"; expressions use the parameters, integer
  // literals, + - * // % and parentheses; a product needs a constant side and // and %
  // a positive constant divisor. Bad text throws UserError "<index_map>:1:<column>: why".
  static IndexMap parse(std::string_view text);
  // The canonical lambda text (parse(to_string()) gives an equal map and the same text).
  std::string to_string() const;

  size_t num_inputs() const { return params_.size(); }
  size_t num_outputs() const { return results_.size(); }
  const std::vector<ir::Var>& params() const { return params_; }
  // Over the parameters (i64 variables and constants).
  const std::vector<ir::Expr>& results() const { return results_; }

  // The results with the parameters replaced by `indices` (num_inputs of them), built in
  // the widest integer type of `indices` (narrower ones are cast). Not simplified.
  std::vector<ir::Expr> apply(const std::vector<ir::Expr>& indices) const;
  // The results at an integer point (num_inputs values), with floor division.
  std::vector<int64_t> evaluate(const std::vector<int64_t>& point) const;

  friend bool operator==(const IndexMap& a, const IndexMap& b) { return a.to_string() == b.to_string(); }

 private:
  std::vector<ir::Var> params_;
  std::vector<ir::Expr> results_;
};

}  // namespace dragon::schedule
