// Names of node kinds and intrinsics, generated from the .def tables.
#include "dragon/ir/expr.h"
#include "dragon/ir/node.h"
#include "dragon/support/error.h"

namespace dragon::ir {

std::string_view node_kind_name(NodeKind kind) {
  switch (kind) {
#define DRAGON_EXPR_NODE(Name) \
  case NodeKind::Name: return #Name;
#define DRAGON_BINARY_NODE(Name) \
  case NodeKind::Name: return #Name;
#define DRAGON_STMT_NODE(Name) \
  case NodeKind::Name: return #Name;
#include "dragon/ir/nodes.def"
  }
  DRAGON_UNREACHABLE("node kind {}", static_cast<int>(kind));
}

std::string_view intrinsic_name(Intrinsic op) {
  switch (op) {
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) \
  case Intrinsic::Name: return spelling;
#include "dragon/ir/intrinsics.def"
  }
  DRAGON_UNREACHABLE("intrinsic {}", static_cast<int>(op));
}

int intrinsic_arity(Intrinsic op) {
  switch (op) {
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) \
  case Intrinsic::Name: return arity;
#include "dragon/ir/intrinsics.def"
  }
  DRAGON_UNREACHABLE("intrinsic {}", static_cast<int>(op));
}

bool intrinsic_is_effect(Intrinsic op) {
  switch (op) {
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) \
  case Intrinsic::Name: return std::string_view(#kind) == "EFFECT";
#include "dragon/ir/intrinsics.def"
  }
  DRAGON_UNREACHABLE("intrinsic {}", static_cast<int>(op));
}

}  // namespace dragon::ir
