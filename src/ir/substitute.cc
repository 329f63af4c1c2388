// Variable substitution (substitute.h): a mutator that replaces variable nodes found in the
// map and rebuilds only the nodes above a replacement.
#include "dragon/ir/substitute.h"

#include "dragon/ir/functor.h"

namespace dragon::ir {
namespace {

class Substituter final : public StmtExprMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

 protected:
  using StmtExprMutator::visit_;
  Expr visit_(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? Expr(op) : it->second;
  }

 private:
  const VarMap& map_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (!e.defined() || map.empty()) return e;
  return Substituter(map).visit(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (!s.defined() || map.empty()) return s;
  return Substituter(map).visit(s);
}

}  // namespace dragon::ir
