// Structural equality up to renaming: a walk over two trees side by side that maps each
// definition on the left to the one at the same place on the right (a bijection), and
// requires every use to follow the map. structural_hash.cc walks in the same order.
#include "dragon/ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace dragon::ir {
namespace {

// NaN equals NaN; otherwise bit patterns, so 0.0 and -0.0 differ.
bool float_equal(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint64_t x, y;
  std::memcpy(&x, &a, sizeof(x));
  std::memcpy(&y, &b, sizeof(y));
  return x == y;
}

bool annotations_equal(const Annotations& a, const Annotations& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.index() != ib->second.index()) return false;
    if (const auto* d = std::get_if<double>(&ia->second)) {
      if (!float_equal(*d, std::get<double>(ib->second))) return false;
    } else if (ia->second != ib->second) {
      return false;
    }
  }
  return true;
}

class Equal {
 public:
  bool function(const PrimFunc& a, const PrimFunc& b) {
    if (a->name != b->name || !annotations_equal(a->attrs, b->attrs)) return false;
    if (a->params.size() != b->params.size()) return false;
    for (size_t i = 0; i < a->params.size(); ++i) {
      const Param& x = a->params[i];
      const Param& y = b->params[i];
      if (x.role != y.role || !(x.domain == y.domain) || !define_buffer(x.buffer, y.buffer)) return false;
    }
    return stmt(a->body, b->body);
  }

  bool expr(const Expr& a, const Expr& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    switch (a.kind()) {
      case NodeKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
      case NodeKind::FloatImm: return float_equal(a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value);
      case NodeKind::Var: return var_use(a.as<VarNode>(), b.as<VarNode>());
#define DRAGON_BINARY_NODE(Name)                 \
  case NodeKind::Name: {                         \
    const auto* x = a.as<Name##Node>();          \
    const auto* y = b.as<Name##Node>();          \
    return expr(x->a, y->a) && expr(x->b, y->b); \
  }
#include "dragon/ir/nodes.def"
      case NodeKind::Not: return expr(a.as<NotNode>()->a, b.as<NotNode>()->a);
      case NodeKind::Select: {
        const auto* x = a.as<SelectNode>();
        const auto* y = b.as<SelectNode>();
        return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
               expr(x->false_value, y->false_value);
      }
      case NodeKind::Cast: return expr(a.as<CastNode>()->value, b.as<CastNode>()->value);
      case NodeKind::Call: {
        const auto* x = a.as<CallNode>();
        const auto* y = b.as<CallNode>();
        return x->op == y->op && exprs(x->args, y->args);
      }
      case NodeKind::BufferLoad: {
        const auto* x = a.as<BufferLoadNode>();
        const auto* y = b.as<BufferLoadNode>();
        return buffer_use(x->buffer, y->buffer) && exprs(x->indices, y->indices);
      }
      default: return false;
    }
  }

  bool stmt(const Stmt& a, const Stmt& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case NodeKind::For: {
        const auto* x = a.as<ForNode>();
        const auto* y = b.as<ForNode>();
        return x->for_kind == y->for_kind && x->thread_tag == y->thread_tag &&
               annotations_equal(x->annotations, y->annotations) && expr(x->min, y->min) &&
               expr(x->extent, y->extent) && define_var(x->loop_var, y->loop_var) && stmt(x->body, y->body);
      }
      case NodeKind::Block: return block(a.as<BlockNode>(), b.as<BlockNode>());
      case NodeKind::BlockRealize: {
        const auto* x = a.as<BlockRealizeNode>();
        const auto* y = b.as<BlockRealizeNode>();
        return exprs(x->iter_values, y->iter_values) && expr(x->predicate, y->predicate) && stmt(x->block, y->block);
      }
      case NodeKind::SeqStmt: {
        const auto* x = a.as<SeqStmtNode>();
        const auto* y = b.as<SeqStmtNode>();
        if (x->seq.size() != y->seq.size()) return false;
        for (size_t i = 0; i < x->seq.size(); ++i) {
          if (!stmt(x->seq[i], y->seq[i])) return false;
        }
        return true;
      }
      case NodeKind::IfThenElse: {
        const auto* x = a.as<IfThenElseNode>();
        const auto* y = b.as<IfThenElseNode>();
        return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) && stmt(x->else_case, y->else_case);
      }
      case NodeKind::BufferStore: {
        const auto* x = a.as<BufferStoreNode>();
        const auto* y = b.as<BufferStoreNode>();
        return buffer_use(x->buffer, y->buffer) && expr(x->value, y->value) && exprs(x->indices, y->indices);
      }
      case NodeKind::Allocate: {
        const auto* x = a.as<AllocateNode>();
        const auto* y = b.as<AllocateNode>();
        return define_buffer(x->buffer, y->buffer) && stmt(x->body, y->body);
      }
      case NodeKind::Evaluate: return expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
      default: return false;
    }
  }

 private:
  // Domains belong to the scope outside the block, so they come before the variables.
  bool block(const BlockNode* x, const BlockNode* y) {
    if (x->name != y->name || !annotations_equal(x->annotations, y->annotations)) return false;
    if (x->iter_vars.size() != y->iter_vars.size() || x->alloc_buffers.size() != y->alloc_buffers.size()) {
      return false;
    }
    for (size_t i = 0; i < x->iter_vars.size(); ++i) {
      const IterVar& u = x->iter_vars[i];
      const IterVar& v = y->iter_vars[i];
      if (u.kind != v.kind || !expr(u.dom.min, v.dom.min) || !expr(u.dom.extent, v.dom.extent)) return false;
    }
    for (size_t i = 0; i < x->iter_vars.size(); ++i) {
      if (!define_var(x->iter_vars[i].var, y->iter_vars[i].var)) return false;
    }
    if (!regions(x->reads, y->reads) || !regions(x->writes, y->writes)) return false;
    for (size_t i = 0; i < x->alloc_buffers.size(); ++i) {
      if (!define_buffer(x->alloc_buffers[i], y->alloc_buffers[i])) return false;
    }
    return stmt(x->init, y->init) && stmt(x->body, y->body);
  }

  bool regions(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!buffer_use(a[i].buffer, b[i].buffer) || a[i].region.size() != b[i].region.size()) return false;
      for (size_t d = 0; d < a[i].region.size(); ++d) {
        if (!expr(a[i].region[d].min, b[i].region[d].min) || !expr(a[i].region[d].extent, b[i].region[d].extent)) {
          return false;
        }
      }
    }
    return true;
  }

  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool define_var(const Var& a, const Var& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.dtype() != b.dtype()) return false;
    var_map_[a.get()] = b.get();
    var_rev_[b.get()] = a.get();
    return true;
  }

  bool var_use(const VarNode* a, const VarNode* b) {
    if (auto it = var_map_.find(a); it != var_map_.end()) return it->second == b;
    if (var_rev_.count(b)) return false;
    return a == b;
  }

  bool define_buffer(const Buffer& a, const Buffer& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a->dtype != b->dtype || a->shape != b->shape || a->scope != b->scope) return false;
    buffer_map_[a.get()] = b.get();
    buffer_rev_[b.get()] = a.get();
    return true;
  }

  bool buffer_use(const Buffer& a, const Buffer& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (auto it = buffer_map_.find(a.get()); it != buffer_map_.end()) return it->second == b.get();
    if (buffer_rev_.count(b.get())) return false;
    return a.get() == b.get();
  }

  std::unordered_map<const VarNode*, const VarNode*> var_map_, var_rev_;
  std::unordered_map<const BufferNode*, const BufferNode*> buffer_map_, buffer_rev_;
};

}  // namespace

bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || Equal().function(a, b);
}

bool structural_equal(const Stmt& a, const Stmt& b) { return Equal().stmt(a, b); }

bool structural_equal(const Expr& a, const Expr& b) { return Equal().expr(a, b); }

}  // namespace dragon::ir
