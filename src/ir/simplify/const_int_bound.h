// Interval bounds of integer expressions under an Analyzer's variable ranges (private).
// Not a simplifier: it never rewrites, it only encloses values.
#pragma once

#include "dragon/ir/simplify.h"
#include "interval.h"
#include "linear_form.h"

namespace dragon::ir::simplify_detail {

// Encloses every value `e` takes; clamped to the values of its type.
Interval bound_of(const Expr& e, const Analyzer& analyzer);
// Encloses the exact (unwrapped) value of the form: sum of coeff * bound(term) + constant.
Interval bound_of(const LinearForm& form, const Analyzer& analyzer);

}  // namespace dragon::ir::simplify_detail
