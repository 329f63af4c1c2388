// Statements of the tensor IR (TensorIR-like): loops with kinds and annotations, blocks
// with iteration variables, access regions and init, block realizations, sequences,
// conditionals, stores, allocations. Immutable; built with make().
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "dragon/ir/buffer.h"
#include "dragon/ir/expr.h"

namespace dragon::ir {

struct StmtNode : public IRNode {
  using IRNode::IRNode;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(const StmtNode* node) : ptr_(const_cast<StmtNode*>(node)) {}

  const StmtNode* get() const { return ptr_.get(); }
  const StmtNode* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_.defined(); }
  bool same_as(const Stmt& other) const { return ptr_.get() == other.ptr_.get(); }
  NodeKind kind() const { return ptr_->kind; }

  template <typename T>
  const T* as() const {
    return ptr_ && ptr_->kind == T::kKind ? static_cast<const T*>(ptr_.get()) : nullptr;
  }

 private:
  IntrusivePtr<StmtNode> ptr_;
};

template <NodeKind K>
struct StmtNodeBase : public StmtNode {
  static constexpr NodeKind kKind = K;
  StmtNodeBase() : StmtNode(K) {}
};

// [min, min + extent)
struct Range {
  Expr min;
  Expr extent;
  static Range from_extent(Expr extent);
  static Range make(Expr min, Expr extent) { return Range{std::move(min), std::move(extent)}; }
};

// Values attached to loops, blocks and functions: "pragma_auto_unroll_max_step" -> 64.
using AnnotationValue = std::variant<int64_t, double, std::string>;
using Annotations = std::map<std::string, AnnotationValue, std::less<>>;

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
std::string_view for_kind_name(ForKind kind);

struct ForNode : StmtNodeBase<NodeKind::For> {
  Var loop_var;
  Expr min;
  Expr extent;
  ForKind for_kind = ForKind::kSerial;
  // For kThreadBinding: "blockIdx.x", "threadIdx.y", "vthread.x", ...; empty otherwise.
  std::string thread_tag;
  Annotations annotations;
  Stmt body;

  static Stmt make(Var loop_var, Expr min, Expr extent, ForKind for_kind, Stmt body,
                   std::string thread_tag = {}, Annotations annotations = {});
};

// How a block iteration variable relates to the computation.
//   kSpatial: independent instances (data parallel).
//   kReduce: a commutative, associative reduction axis; init runs at its first value.
//   kOrdered: instances must run in increasing order (scans: a carried dependence).
//   kOpaque: no property known.
enum class IterKind : uint8_t { kSpatial, kReduce, kOrdered, kOpaque };
std::string_view iter_kind_name(IterKind kind);

struct IterVar {
  Var var;
  Range dom;
  IterKind kind = IterKind::kSpatial;
};

struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  // The whole buffer.
  static BufferRegion full(const Buffer& buffer);
};

class Block;

// A unit of computation with its own iteration space. Its body only sees the block's
// iteration variables, never the loops outside it (BlockRealize binds them).
struct BlockNode : StmtNodeBase<NodeKind::Block> {
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  // Buffers that live while the block runs (intermediates, caches).
  std::vector<Buffer> alloc_buffers;
  // For reductions: runs when every reduce iteration variable is at its domain's min.
  Stmt init;
  Stmt body;
  Annotations annotations;

  static Block make(std::string name, std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                    std::vector<BufferRegion> writes, Stmt body, Stmt init = {},
                    std::vector<Buffer> alloc_buffers = {}, Annotations annotations = {});
};

class Block : public Stmt {
 public:
  Block() = default;
  explicit Block(const BlockNode* node) : Stmt(node) {}
  const BlockNode* get() const { return static_cast<const BlockNode*>(Stmt::get()); }
  const BlockNode* operator->() const { return get(); }
};

// Runs `block` with its iteration variables bound to `iter_values` when `predicate` holds.
struct BlockRealizeNode : StmtNodeBase<NodeKind::BlockRealize> {
  std::vector<Expr> iter_values;
  Expr predicate;
  Block block;
  static Stmt make(std::vector<Expr> iter_values, Expr predicate, Block block);
};

struct SeqStmtNode : StmtNodeBase<NodeKind::SeqStmt> {
  std::vector<Stmt> seq;
  // Flattens nested sequences; a single statement is returned as itself.
  static Stmt make(std::vector<Stmt> seq);
};

struct IfThenElseNode : StmtNodeBase<NodeKind::IfThenElse> {
  Expr condition;
  Stmt then_case;
  Stmt else_case;  // may be undefined
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = {});
};

struct BufferStoreNode : StmtNodeBase<NodeKind::BufferStore> {
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices);
};

// Lowered form of an allocation: `buffer` lives while `body` runs.
struct AllocateNode : StmtNodeBase<NodeKind::Allocate> {
  Buffer buffer;
  Stmt body;
  static Stmt make(Buffer buffer, Stmt body);
};

// Evaluates an expression for its effect (intrinsic calls in lowered code).
struct EvaluateNode : StmtNodeBase<NodeKind::Evaluate> {
  Expr value;
  static Stmt make(Expr value);
};

}  // namespace dragon::ir
