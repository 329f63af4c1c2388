// compact_buffers: shrinks each Allocate'd buffer, per dimension, to the range its accesses
// reach while the loops around the Allocate are fixed (shared memory: for every thread of
// a block) and shifts accesses by the range's start. Block-free IR; parameters untouched.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

struct LoopRange {
  ir::Var var;
  ir::Range range;
  bool thread = false;  // bound to threadIdx.* or vthread.*
};

bool is_thread_loop(const ir::ForNode* loop) {
  return loop->for_kind == ir::ForKind::kThreadBinding && (loop->thread_tag.rfind("threadIdx.", 0) == 0 ||
                                                           loop->thread_tag.rfind("vthread.", 0) == 0);
}

bool is_shared(const std::string& scope) { return scope == "shared" || scope == "shared.dyn"; }

// The index lists of every access to one buffer, and the loops met on the way down.
class AccessCollector : public ir::StmtExprVisitor {
 public:
  explicit AccessCollector(const ir::BufferNode* buffer) : buffer_(buffer) {}
  std::vector<std::vector<ir::Expr>> accesses;
  std::vector<LoopRange> inner_loops;  // pre-order: a loop's bounds only use loops before it

 protected:
  void visit_(const ir::ForNode* op) override {
    inner_loops.push_back({op->loop_var, ir::Range::make(op->min, op->extent)});
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) accesses.push_back(op->indices);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (op->buffer.get() == buffer_) accesses.push_back(op->indices);
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  const ir::BufferNode* buffer_;
};

class VarReplacer : public ir::ExprMutator {
 public:
  explicit VarReplacer(const std::unordered_map<const ir::VarNode*, ir::Expr>& values) : values_(values) {}
  bool replaced_all = true;  // false when a replacement still used a replaced variable

 protected:
  ir::Expr visit_(const ir::VarNode* op) override {
    auto it = values_.find(op);
    return it == values_.end() ? ir::Expr(op) : it->second;
  }

 private:
  const std::unordered_map<const ir::VarNode*, ir::Expr>& values_;
};

bool uses_any(const ir::Expr& e, const std::unordered_map<const ir::VarNode*, ir::Expr>& vars) {
  struct Finder : ir::ExprVisitor {
    const std::unordered_map<const ir::VarNode*, ir::Expr>* vars;
    bool found = false;
    void visit_(const ir::VarNode* op) override { found |= vars->count(op) > 0; }
  } finder;
  finder.vars = &vars;
  finder.visit(e);
  return finder.found;
}

// `e` in the integer type of `like` (accesses of one buffer may index in i32 and i64).
ir::Expr as_type(const ir::Expr& e, const ir::Expr& like) {
  return e.dtype() == like.dtype() ? e : ir::cast(like.dtype(), e);
}

struct CompactDim {
  ir::Expr offset;  // undefined: the dimension keeps its extent and indices
  int64_t extent = 0;
};

// Every distinct expression among `exprs`, in order of first appearance (free variables by
// identity, structural_equal.h).
std::vector<ir::Expr> distinct(const std::vector<ir::Expr>& exprs) {
  std::unordered_map<uint64_t, std::vector<size_t>> seen;  // structural hash -> positions in `unique`
  std::vector<ir::Expr> unique;
  for (const ir::Expr& e : exprs) {
    std::vector<size_t>& same_hash = seen[ir::structural_hash(e)];
    bool repeated = std::any_of(same_hash.begin(), same_hash.end(),
                                [&](size_t u) { return ir::structural_equal(unique[u], e); });
    if (repeated) continue;
    same_hash.push_back(unique.size());
    unique.push_back(e);
  }
  return unique;
}

// The tightest [offset, offset + extent) among candidate offsets (each access's index with
// the inner loops at their first iteration) that provably holds every access. A buffer is
// often read and written at the same index, and many indices share their start: each
// distinct index and each distinct offset is analysed once, since this pass is quadratic in
// them and a large share of a candidate's lowering time (bench/lower_codegen_bench.cc).
CompactDim compact_dim(int dim, int64_t original_extent, const AccessCollector& uses, const ir::Analyzer& all_loops,
                       const std::unordered_map<const ir::VarNode*, ir::Expr>& inner_mins) {
  std::vector<ir::Expr> indices;
  for (const std::vector<ir::Expr>& access : uses.accesses) indices.push_back(access[dim]);
  indices = distinct(indices);
  std::vector<ir::Expr> offsets;
  for (const ir::Expr& index : indices) {
    VarReplacer at_start(inner_mins);
    ir::Expr offset = all_loops.simplify(at_start.visit(index));
    if (!uses_any(offset, inner_mins)) offsets.push_back(offset);
  }
  CompactDim best{ir::Expr(), original_extent};
  for (const ir::Expr& offset : distinct(offsets)) {
    int64_t extent = 0;
    bool bounded = true;
    for (const ir::Expr& index : indices) {
      ir::ConstIntBound bound = all_loops.const_int_bound(all_loops.simplify(index - as_type(offset, index)));
      if (!bound.min || !bound.max || *bound.min < 0) {
        bounded = false;
        break;
      }
      extent = std::max(extent, *bound.max + 1);
    }
    if (bounded && extent < best.extent) best = CompactDim{offset, extent};
  }
  return best;
}

class BufferReindexer : public ir::StmtExprMutator {
 public:
  BufferReindexer(const ir::BufferNode* from, ir::Buffer to, std::vector<CompactDim> dims)
      : from_(from), to_(std::move(to)), dims_(std::move(dims)) {}

 protected:
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr visited = ir::StmtExprMutator::visit_(op);
    const auto* load = visited.as<ir::BufferLoadNode>();
    if (load->buffer.get() != from_) return visited;
    return ir::BufferLoadNode::make(to_, shifted(load->indices));
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt visited = ir::StmtExprMutator::visit_(op);
    const auto* store = visited.as<ir::BufferStoreNode>();
    if (store->buffer.get() != from_) return visited;
    return ir::BufferStoreNode::make(to_, store->value, shifted(store->indices));
  }

 private:
  std::vector<ir::Expr> shifted(const std::vector<ir::Expr>& indices) const {
    std::vector<ir::Expr> result = indices;
    for (size_t d = 0; d < dims_.size(); ++d) {
      if (dims_[d].offset.defined()) result[d] = ir::simplify(result[d] - as_type(dims_[d].offset, result[d]));
    }
    return result;
  }
  const ir::BufferNode* from_;
  ir::Buffer to_;
  std::vector<CompactDim> dims_;
};

class Compactor : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    outer_loops_.push_back({op->loop_var, ir::Range::make(op->min, op->extent), is_thread_loop(op)});
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    outer_loops_.pop_back();
    return visited;
  }

  ir::Stmt visit_(const ir::AllocateNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);  // inner allocations first
    const auto* alloc = visited.as<ir::AllocateNode>();
    const ir::Buffer& buffer = alloc->buffer;
    AccessCollector uses(buffer.get());
    uses.visit(alloc->body);
    if (uses.accesses.empty()) return visited;

    ir::Analyzer all_loops;
    for (const LoopRange& l : outer_loops_) all_loops.bind(l.var, l.range);
    std::unordered_map<const ir::VarNode*, ir::Expr> inner_mins;
    // Shared memory serves every thread of a block: its region spans the thread loops
    // around the Allocate too, so its offset never depends on a thread index.
    if (is_shared(buffer->scope)) {
      for (const LoopRange& l : outer_loops_) {
        if (l.thread) inner_mins[l.var.get()] = l.range.min;
      }
    }
    for (const LoopRange& l : uses.inner_loops) {
      all_loops.bind(l.var, l.range);
      inner_mins[l.var.get()] = l.range.min;
    }
    std::vector<CompactDim> dims;
    std::vector<int64_t> shape = buffer->shape;
    bool shrinks = false;
    for (int d = 0; d < buffer.ndim(); ++d) {
      dims.push_back(compact_dim(d, shape[d], uses, all_loops, inner_mins));
      if (dims.back().offset.defined()) {
        shape[d] = dims.back().extent;
        shrinks = true;
      }
    }
    if (!shrinks) return visited;
    ir::Buffer compacted = ir::Buffer::make(buffer->name, buffer->dtype, shape, buffer->scope);
    ir::Stmt body = BufferReindexer(buffer.get(), compacted, std::move(dims)).visit(alloc->body);
    return ir::AllocateNode::make(compacted, std::move(body));
  }

 private:
  std::vector<LoopRange> outer_loops_;
};

}  // namespace

ir::PrimFunc compact_buffers(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "compact_buffers runs on block-free IR (after lower_blocks)");
  return func.with_body(Compactor().visit(func->body));
}

}  // namespace dragon::lower
