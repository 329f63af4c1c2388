// The kind tag every IR node carries, generated from nodes.def, and the base of all nodes.
#pragma once

#include <cstdint>
#include <string_view>

#include "dragon/support/intrusive_ptr.h"

namespace dragon::ir {

enum class NodeKind : uint8_t {
#define DRAGON_EXPR_NODE(Name) Name,
#define DRAGON_BINARY_NODE(Name) Name,
#define DRAGON_STMT_NODE(Name) Name,
#include "dragon/ir/nodes.def"
};

inline constexpr int kNumNodeKinds = 0
#define DRAGON_EXPR_NODE(Name) +1
#define DRAGON_BINARY_NODE(Name) +1
#define DRAGON_STMT_NODE(Name) +1
#include "dragon/ir/nodes.def"
    ;

// "Add", "BufferStore", ...
std::string_view node_kind_name(NodeKind kind);

// Base of expression and statement nodes. Nodes are immutable once made.
struct IRNode : public RefCounted {
  explicit IRNode(NodeKind kind) : kind(kind) {}
  const NodeKind kind;
};

}  // namespace dragon::ir
