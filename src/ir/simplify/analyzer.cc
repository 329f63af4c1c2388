// (being written: the arithmetic simplifier)
#include "dragon/ir/simplify.h"

namespace dragon::ir {

void Analyzer::bind(const Var& var, const Range& range) {}
void Analyzer::bind(const Var& var, int64_t min, int64_t extent) {}
Expr Analyzer::simplify(const Expr& e) const { return e; }
bool Analyzer::can_prove(const Expr& condition) const { return false; }
bool Analyzer::can_prove_equal(const Expr& a, const Expr& b) const { return a.same_as(b); }
ConstIntBound Analyzer::const_int_bound(const Expr& e) const { return {}; }
Expr simplify(const Expr& e) { return e; }
Stmt simplify(const Stmt& s) { return s; }

}  // namespace dragon::ir
