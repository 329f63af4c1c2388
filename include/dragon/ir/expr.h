// Expressions of the tensor IR: immediates, variables, arithmetic, comparisons, logic,
// select, casts, math intrinsics and buffer loads. Immutable; built with make() or the
// operators of ir/op.h. Buffers are in buffer.h; statements in stmt.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/buffer.h"
#include "dragon/ir/dtype.h"
#include "dragon/ir/node.h"

namespace dragon::ir {

struct ExprNode : public IRNode {
  ExprNode(NodeKind kind, DataType dtype) : IRNode(kind), dtype(dtype) {}
  const DataType dtype;
};

// A handle to an immutable expression node. Copying shares the node.
class Expr {
 public:
  Expr() = default;
  explicit Expr(const ExprNode* node) : ptr_(const_cast<ExprNode*>(node)) {}
  // An i32 immediate; lets builders write A(i, 0).
  Expr(int value);  // NOLINT(google-explicit-constructor)

  const ExprNode* get() const { return ptr_.get(); }
  const ExprNode* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_.defined(); }
  bool same_as(const Expr& other) const { return ptr_.get() == other.ptr_.get(); }
  DataType dtype() const { return ptr_->dtype; }
  NodeKind kind() const { return ptr_->kind; }

  // The node as T if it is one, else nullptr.
  template <typename T>
  const T* as() const {
    return ptr_ && ptr_->kind == T::kKind ? static_cast<const T*>(ptr_.get()) : nullptr;
  }

 private:
  IntrusivePtr<ExprNode> ptr_;
};

template <typename Derived, NodeKind K>
struct ExprNodeBase : public ExprNode {
  static constexpr NodeKind kKind = K;
  explicit ExprNodeBase(DataType dtype) : ExprNode(K, dtype) {}
};

struct IntImmNode : ExprNodeBase<IntImmNode, NodeKind::IntImm> {
  IntImmNode(DataType dtype, int64_t value) : ExprNodeBase(dtype), value(value) {}
  const int64_t value;
  // Integer or bool immediate; the value must fit the type.
  static Expr make(DataType dtype, int64_t value);
};

struct FloatImmNode : ExprNodeBase<FloatImmNode, NodeKind::FloatImm> {
  FloatImmNode(DataType dtype, double value) : ExprNodeBase(dtype), value(value) {}
  // Already rounded to dtype (an f16 immediate holds an f16-representable value).
  const double value;
  static Expr make(DataType dtype, double value);
};

struct VarNode : ExprNodeBase<VarNode, NodeKind::Var> {
  VarNode(DataType dtype, std::string name) : ExprNodeBase(dtype), name(std::move(name)) {}
  // For printing only: identity is the node, two variables may share a name.
  const std::string name;
};

// A handle that is known to hold a variable (loop and block iteration variables).
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType dtype = DataType::i32());
  explicit Var(const VarNode* node) : Expr(node) {}
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

template <typename Derived, NodeKind K>
struct BinaryNode : ExprNodeBase<Derived, K> {
  BinaryNode(DataType dtype, Expr a, Expr b) : ExprNodeBase<Derived, K>(dtype), a(std::move(a)), b(std::move(b)) {}
  const Expr a;
  const Expr b;
  // Operands must have the same type; comparisons yield bool, the rest the operand type.
  static Expr make(Expr a, Expr b);
};

#define DRAGON_BINARY_NODE(Name) \
  struct Name##Node : BinaryNode<Name##Node, NodeKind::Name> { using BinaryNode::BinaryNode; };
#include "dragon/ir/nodes.def"

struct NotNode : ExprNodeBase<NotNode, NodeKind::Not> {
  NotNode(Expr a) : ExprNodeBase(a.dtype()), a(std::move(a)) {}
  const Expr a;
  static Expr make(Expr a);
};

struct SelectNode : ExprNodeBase<SelectNode, NodeKind::Select> {
  SelectNode(Expr condition, Expr true_value, Expr false_value)
      : ExprNodeBase(true_value.dtype()),
        condition(std::move(condition)),
        true_value(std::move(true_value)),
        false_value(std::move(false_value)) {}
  const Expr condition;
  const Expr true_value;
  const Expr false_value;
  static Expr make(Expr condition, Expr true_value, Expr false_value);
};

// Conversion with C semantics for ints (truncating float->int, wrapping narrowing) and
// round-to-nearest-even for floats; x != 0 for bool.
struct CastNode : ExprNodeBase<CastNode, NodeKind::Cast> {
  CastNode(DataType dtype, Expr value) : ExprNodeBase(dtype), value(std::move(value)) {}
  const Expr value;
  static Expr make(DataType dtype, Expr value);
};

enum class Intrinsic : uint8_t {
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) Name,
#include "dragon/ir/intrinsics.def"
};
std::string_view intrinsic_name(Intrinsic op);
int intrinsic_arity(Intrinsic op);
// True for intrinsics with no value, evaluated for their effect (sync_threads).
bool intrinsic_is_effect(Intrinsic op);

struct CallNode : ExprNodeBase<CallNode, NodeKind::Call> {
  CallNode(DataType dtype, Intrinsic op, std::vector<Expr> args)
      : ExprNodeBase(dtype), op(op), args(std::move(args)) {}
  const Intrinsic op;
  const std::vector<Expr> args;
  static Expr make(Intrinsic op, std::vector<Expr> args);
};

// Reads buffer[indices]. Indices are integer expressions of any int type and may load
// from other buffers (gathers).
struct BufferLoadNode : ExprNodeBase<BufferLoadNode, NodeKind::BufferLoad> {
  BufferLoadNode(Buffer buffer, std::vector<Expr> indices)
      : ExprNodeBase(buffer->dtype), buffer(std::move(buffer)), indices(std::move(indices)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  static Expr make(Buffer buffer, std::vector<Expr> indices);
};


}  // namespace dragon::ir
