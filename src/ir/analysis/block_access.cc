// Region detection for blocks built by the operator library and by schedule primitives.
#include "dragon/ir/block_access.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"

namespace dragon::ir {
namespace {

// Splits `e` into (base, constant) with e == base + constant when e is `base + c`,
// `base - c` or a constant; base is undefined for a pure constant.
std::pair<Expr, int64_t> split_constant_offset(const Expr& e) {
  if (auto c = as_const_int(e)) return {Expr(), *c};
  if (const auto* add = e.as<AddNode>()) {
    if (auto c = as_const_int(add->b)) return {add->a, *c};
  }
  if (const auto* sub = e.as<SubNode>()) {
    if (auto c = as_const_int(sub->b)) return {sub->a, -*c};
  }
  return {e, 0};
}

// Pointer-identity structural test good enough for merging accesses written by one builder:
// the same node, the same variable, or equal constants.
bool same_expr(const Expr& a, const Expr& b);

bool same_exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_expr(a[i], b[i])) return false;
  }
  return true;
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case NodeKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case NodeKind::FloatImm: return a.as<FloatImmNode>()->value == b.as<FloatImmNode>()->value;
    case NodeKind::Var: return false;  // distinct nodes are distinct variables
#define DRAGON_BINARY_NODE(Name)                                                         \
  case NodeKind::Name: {                                                                 \
    const auto* x = a.as<Name##Node>();                                                  \
    const auto* y = b.as<Name##Node>();                                                  \
    return same_expr(x->a, y->a) && same_expr(x->b, y->b);                               \
  }
#include "dragon/ir/nodes.def"
    case NodeKind::Cast: return same_expr(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case NodeKind::Not: return same_expr(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::BufferLoad: {
      const auto* x = a.as<BufferLoadNode>();
      const auto* y = b.as<BufferLoadNode>();
      return x->buffer.same_as(y->buffer) && same_exprs(x->indices, y->indices);
    }
    default: return false;
  }
}

// Index expressions that are affine in outer variables only: no loads, no loop variables
// of loops nested inside the block body.
class IndexInspector : public ExprVisitor {
 public:
  explicit IndexInspector(const std::unordered_set<const VarNode*>& inner_vars) : inner_vars_(inner_vars) {}
  bool plain = true;

 protected:
  void visit_(const VarNode* op) override {
    if (inner_vars_.count(op)) plain = false;
  }
  void visit_(const BufferLoadNode* op) override { plain = false; }

 private:
  const std::unordered_set<const VarNode*>& inner_vars_;
};

struct Access {
  Buffer buffer;
  std::vector<Expr> indices;
  std::vector<bool> plain;  // per dimension: index usable as a point
};

class AccessCollector : public StmtExprVisitor {
 public:
  std::vector<Access> reads;
  std::vector<Access> writes;

 protected:
  void visit_(const BufferLoadNode* op) override {
    reads.push_back(make_access(op->buffer, op->indices));
    ExprVisitor::visit_(op);
  }
  void visit_(const BufferStoreNode* op) override {
    writes.push_back(make_access(op->buffer, op->indices));
    StmtExprVisitor::visit_(op);
  }
  void visit_(const ForNode* op) override {
    inner_vars_.insert(op->loop_var.get());
    StmtExprVisitor::visit_(op);
    inner_vars_.erase(op->loop_var.get());
  }
  void visit_(const BlockRealizeNode* op) override {
    // A nested block's accesses are its own; the outer block sees its regions relaxed.
    for (const BufferRegion& r : op->block->reads) reads.push_back(full_access(r.buffer));
    for (const BufferRegion& r : op->block->writes) writes.push_back(full_access(r.buffer));
  }

 private:
  Access make_access(const Buffer& buffer, const std::vector<Expr>& indices) {
    Access a{buffer, indices, {}};
    for (const Expr& index : indices) {
      IndexInspector inspector(inner_vars_);
      inspector.visit(index);
      a.plain.push_back(inspector.plain);
    }
    return a;
  }
  static Access full_access(const Buffer& buffer) {
    Access a{buffer, {}, std::vector<bool>(buffer.ndim(), false)};
    for (int i = 0; i < buffer.ndim(); ++i) a.indices.push_back(Expr());
    return a;
  }

  std::unordered_set<const VarNode*> inner_vars_;
};

Range full_dim(const Buffer& buffer, int dim, DataType type) {
  return Range{make_zero(type), make_const(type, static_cast<double>(buffer->shape[dim]))};
}

// Merges all accesses to one buffer into one region, dimension by dimension.
BufferRegion merge(const std::vector<const Access*>& accesses) {
  const Buffer& buffer = accesses.front()->buffer;
  BufferRegion result{buffer, {}};
  for (int d = 0; d < buffer.ndim(); ++d) {
    const Expr& first = accesses.front()->indices[d];
    DataType type = first.defined() ? first.dtype() : DataType::i32();
    bool all_plain = std::all_of(accesses.begin(), accesses.end(), [&](const Access* a) { return a->plain[d]; });
    if (!all_plain) {
      result.region.push_back(full_dim(buffer, d, type));
      continue;
    }
    auto [base, lo] = split_constant_offset(first);
    int64_t hi = lo;
    bool ok = true;
    for (const Access* a : accesses) {
      auto [b, c] = split_constant_offset(a->indices[d]);
      if (b.defined() != base.defined() || (base.defined() && !same_expr(b, base)) || a->indices[d].dtype() != type) {
        ok = false;
        break;
      }
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
    if (!ok) {
      result.region.push_back(full_dim(buffer, d, type));
    } else if (lo == hi) {
      result.region.push_back(Range{first, make_one(type)});
    } else {
      Expr min = base.defined() ? (lo == 0 ? base : base + make_const(type, static_cast<double>(lo)))
                                : make_const(type, static_cast<double>(lo));
      result.region.push_back(Range{min, make_const(type, static_cast<double>(hi - lo + 1))});
    }
  }
  return result;
}

std::vector<BufferRegion> merge_by_buffer(const std::vector<Access>& accesses, const std::vector<Buffer>& allocs) {
  std::vector<const BufferNode*> order;
  for (const Access& a : accesses) {
    bool allocated = std::any_of(allocs.begin(), allocs.end(), [&](const Buffer& b) { return b.same_as(a.buffer); });
    if (allocated) continue;
    if (std::find(order.begin(), order.end(), a.buffer.get()) == order.end()) order.push_back(a.buffer.get());
  }
  std::vector<BufferRegion> result;
  for (const BufferNode* buffer : order) {
    std::vector<const Access*> group;
    for (const Access& a : accesses) {
      if (a.buffer.get() == buffer) group.push_back(&a);
    }
    result.push_back(merge(group));
  }
  return result;
}

}  // namespace

BlockAccessRegions detect_block_access_regions(const Stmt& body, const Stmt& init,
                                               const std::vector<Buffer>& alloc_buffers) {
  AccessCollector collector;
  if (init.defined()) collector.visit(init);
  collector.visit(body);
  std::vector<Access> reads;
  for (const Access& r : collector.reads) {
    // A reduction's update reads its own output at the written indices; like TensorIR, that
    // read is implied by the init and is not a dependence on another block.
    bool self_update = init.defined() && std::any_of(collector.writes.begin(), collector.writes.end(), [&](const Access& w) {
      return w.buffer.same_as(r.buffer) && same_exprs(w.indices, r.indices);
    });
    if (!self_update) reads.push_back(r);
  }
  return {merge_by_buffer(reads, alloc_buffers), merge_by_buffer(collector.writes, alloc_buffers)};
}

}  // namespace dragon::ir
