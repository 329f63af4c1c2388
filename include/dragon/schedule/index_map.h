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
  // The map over parameters `names` (extents `extents`) whose result g fuses the
  // parameters groups[g], row-major in the order listed (the last varies fastest):
  // fusing({"n", "h", "w", "k"}, {2, 6, 6, 9}, {{0, 1, 2}, {3}}) is
  // "lambda n, h, w, k: (n * 36 + h * 6 + w, k)". An empty group is the result 0.
  static IndexMap fusing(const std::vector<std::string>& names, const std::vector<int64_t>& extents,
                         const std::vector<std::vector<size_t>>& groups);
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

  // What the map is over the box [0, extents[0]) x ... when it fuses and permutes whole
  // dimensions: each result a sum of distinct parameters times non-negative constants
  // whose coefficients, sorted, form a mixed radix of the parameters' extents (the
  // smallest 1, each next the previous times its parameter's extent), every parameter of
  // extent > 1 in exactly one result, no constant term. Such a map is a bijection of the
  // box onto the box `shape`; `inverse` gives each parameter over `new_params` (one i64
  // variable per result of `type`, named by the caller's `names` or r0, r1, ...; its
  // constants of `type` too). A map of another
  // form gives `problem` (why, naming the result), and nothing else is set.
  struct Fusion {
    std::vector<int64_t> shape;
    std::vector<ir::Var> new_params;
    std::vector<ir::Expr> inverse;
    // For each result, the parameters (of extent > 1) it fuses, in parameter order.
    std::vector<std::vector<size_t>> sources;
    // For each result, every parameter it scales by a non-zero constant (those of extent
    // 1 too), in parameter order.
    std::vector<std::vector<size_t>> mentions;
    std::string problem;
  };
  Fusion as_fusion(const std::vector<int64_t>& extents, const std::vector<std::string>& names = {},
                   ir::DataType type = ir::DataType::i64()) const;

  friend bool operator==(const IndexMap& a, const IndexMap& b) { return a.to_string() == b.to_string(); }

 private:
  std::vector<ir::Var> params_;
  std::vector<ir::Expr> results_;
};

}  // namespace dragon::schedule
