// PrimFunc construction and parameter queries.
#include "dragon/ir/function.h"

#include <set>

#include "dragon/support/error.h"

namespace dragon::ir {

std::string_view param_role_name(ParamRole role) {
  switch (role) {
    case ParamRole::kInput: return "input";
    case ParamRole::kOutput: return "output";
    case ParamRole::kInOut: return "inout";
  }
  DRAGON_UNREACHABLE("param role {}", static_cast<int>(role));
}

PrimFunc PrimFunc::make(std::string name, std::vector<Param> params, Stmt body, Annotations attrs) {
  DRAGON_CHECK(!name.empty(), "function without a name");
  DRAGON_CHECK(body.defined(), "function {} without a body", name);
  std::set<const BufferNode*> seen;
  for (const Param& p : params) {
    DRAGON_CHECK(p.buffer.defined(), "function {}: undefined parameter", name);
    DRAGON_CHECK(seen.insert(p.buffer.get()).second, "function {}: parameter {} appears twice", name, p.buffer->name);
    DRAGON_CHECK(p.buffer->scope == "global", "function {}: parameter {} is not in global scope", name,
                 p.buffer->name);
  }
  auto* node = new PrimFuncNode();
  node->name = std::move(name);
  node->params = std::move(params);
  node->body = std::move(body);
  node->attrs = std::move(attrs);
  return PrimFunc(node);
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  if (body.same_as(get()->body)) return *this;
  return make(get()->name, get()->params, std::move(body), get()->attrs);
}

const BlockNode* PrimFunc::root_block() const {
  if (const auto* realize = get()->body.as<BlockRealizeNode>()) return realize->block.get();
  return nullptr;
}

std::vector<Buffer> PrimFunc::inputs() const {
  std::vector<Buffer> result;
  for (const Param& p : get()->params) {
    if (p.role != ParamRole::kOutput) result.push_back(p.buffer);
  }
  return result;
}

std::vector<Buffer> PrimFunc::outputs() const {
  std::vector<Buffer> result;
  for (const Param& p : get()->params) {
    if (p.role != ParamRole::kInput) result.push_back(p.buffer);
  }
  return result;
}

}  // namespace dragon::ir
