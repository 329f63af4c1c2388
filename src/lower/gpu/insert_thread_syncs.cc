// insert_thread_syncs (passes.h): places sync_threads() barriers in each kernel where one
// thread may read (or overwrite) a shared element another thread wrote (or still reads),
// scanning statements in program order and each loop twice (its next iteration). Not a
// race detector for code under thread-dependent conditions: barriers cannot go there.
#include <algorithm>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/lower/passes.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

struct Access {
  const ir::BufferNode* buffer = nullptr;
  std::vector<ir::Expr> indices;
  // Variables whose value may have changed since the access (a loop moved on, or the
  // variable belonged to a loop inside the statement): the index no longer names it.
  std::unordered_set<const ir::VarNode*> stale;
};

// Shared accesses made since the last barrier.
struct Pending {
  std::vector<Access> reads, writes;
  void clear() {
    reads.clear();
    writes.clear();
  }
  void mark_stale(const ir::VarNode* var) {
    for (auto* list : {&reads, &writes}) {
      for (Access& a : *list) a.stale.insert(var);
    }
  }
  void merge(const Pending& other) {
    reads.insert(reads.end(), other.reads.begin(), other.reads.end());
    writes.insert(writes.end(), other.writes.begin(), other.writes.end());
  }
};

// A loop of async copies is one leaf: its stores are the pipeline's to order, which only
// the collector's view of the whole loop knows (scanning inside would count them).
bool is_async_copy(const ir::ForNode* loop) { return loop->annotations.count(kAsyncCopyAnnotation) > 0; }

bool is_sync(const ir::Stmt& s) {
  const auto* eval = s.as<ir::EvaluateNode>();
  const auto* call = eval != nullptr ? eval->value.as<ir::CallNode>() : nullptr;
  return call != nullptr && call->op == ir::Intrinsic::SyncThreads;
}

// Loads and stores of memory threads share (shared and global: __syncthreads orders both
// within a block) of a statement taken whole, and the variables it defines. Stores under a
// loop annotated async_copy land only at a later async_wait_group: the pass that made them
// asynchronous (inject_software_pipeline) places their waits and barriers, so they are
// not counted here.
class AccessCollector : public ir::StmtExprVisitor {
 public:
  std::vector<Access> reads, writes;
  std::unordered_set<const ir::VarNode*> defined;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    defined.insert(op->loop_var.get());
    bool async = op->annotations.count(kAsyncCopyAnnotation) > 0;
    async_depth_ += async;
    ir::StmtExprVisitor::visit_(op);
    async_depth_ -= async;
  }
  void visit_(const ir::BufferLoadNode* op) override {
    if (!gpu::is_per_thread_scope(op->buffer->scope)) reads.push_back({op->buffer.get(), op->indices, {}});
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (!gpu::is_per_thread_scope(op->buffer->scope) && async_depth_ == 0) {
      writes.push_back({op->buffer.get(), op->indices, {}});
    }
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  int async_depth_ = 0;
};

class SyncPlanner {
 public:
  explicit SyncPlanner(std::vector<const ir::VarNode*> thread_vars) : thread_vars_(std::move(thread_vars)) {}
  std::unordered_set<const ir::StmtNode*> sync_before;

  // Whether every thread of the block takes the same path through `e`.
  bool uniform(const ir::Expr& e) const {
    if (!e.defined()) return true;
    bool loads = false;
    struct LoadFinder : ir::ExprVisitor {
      bool* found;
      using ir::ExprVisitor::visit_;
      void visit_(const ir::BufferLoadNode*) override { *found = true; }
    } finder;
    finder.found = &loads;
    finder.visit(e);
    return !loads && !gpu::uses_var(e, [&](const ir::VarNode* v) { return is_thread_var(v); });
  }

  void scan(const ir::Stmt& s, Pending& state) {
    if (sync_before.count(s.get())) state.clear();
    // A statement that conflicts as a whole with what came before gets its barrier in
    // front, not deep inside (once per statement rather than once per iteration).
    if (hazard(s, state)) {
      sync_before.insert(s.get());
      state.clear();
    }
    if (is_sync(s)) {
      state.clear();
    } else if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      for (const ir::Stmt& child : seq->seq) scan(child, state);
    } else if (const auto* alloc = s.as<ir::AllocateNode>()) {
      scan(alloc->body, state);
    } else if (const auto* loop = s.as<ir::ForNode>(); loop != nullptr && loop->for_kind != ir::ForKind::kVectorized &&
                                                       !is_async_copy(loop) && uniform(loop->min) &&
                                                       uniform(loop->extent)) {
      Pending before = state;
      scan(loop->body, state);
      // The next iteration: rescan the body only when, taken whole, it conflicts with
      // what the previous iteration left pending (its statements are parts of it).
      state.mark_stale(loop->loop_var.get());
      if (hazard(loop->body, state)) scan(loop->body, state);
      state.mark_stale(loop->loop_var.get());  // after the loop
      std::optional<int64_t> extent = ir::as_const_int(loop->extent);
      if (!extent || *extent < 1) state.merge(before);  // maybe no iteration at all
    } else if (const auto* branch = s.as<ir::IfThenElseNode>(); branch != nullptr && uniform(branch->condition)) {
      Pending other = state;
      scan(branch->then_case, state);
      if (branch->else_case.defined()) scan(branch->else_case, other);
      state.merge(other);
    } else {
      leaf(s, state);
    }
  }

 private:
  bool is_thread_var(const ir::VarNode* v) const {
    return std::find(thread_vars_.begin(), thread_vars_.end(), v) != thread_vars_.end();
  }

  // Two accesses touch one element from one thread only when their indices are the same
  // expression of current values that mentions every thread variable.
  bool same_thread_same_element(const Access& a, const Access& b) const {
    if (a.indices.size() != b.indices.size()) return false;
    std::unordered_set<const ir::VarNode*> seen_threads;
    for (size_t i = 0; i < a.indices.size(); ++i) {
      if (!ir::structural_equal(a.indices[i], b.indices[i])) return false;
      bool stale = gpu::uses_var(a.indices[i], [&](const ir::VarNode* v) {
        if (is_thread_var(v)) seen_threads.insert(v);
        return a.stale.count(v) > 0 || b.stale.count(v) > 0;
      });
      if (stale) return false;
    }
    return seen_threads.size() == thread_vars_.size();
  }

  bool conflicts(const Access& access, const std::vector<Access>& pending) const {
    return std::any_of(pending.begin(), pending.end(), [&](const Access& p) {
      return p.buffer == access.buffer && !same_thread_same_element(p, access);
    });
  }

  static AccessCollector accesses(const ir::Stmt& s) {
    AccessCollector c;
    c.visit(s);
    for (auto* list : {&c.reads, &c.writes}) {
      for (Access& a : *list) a.stale = c.defined;
    }
    return c;
  }

  // A read of what another thread wrote, or a write over what another thread read, since
  // the last barrier. Two writes alone are no hazard (as in TVM's planner): whoever reads
  // the element afterwards gets a barrier first.
  bool hazard(const ir::Stmt& s, const Pending& state) const {
    if (state.reads.empty() && state.writes.empty()) return false;
    AccessCollector c = accesses(s);
    return std::any_of(c.reads.begin(), c.reads.end(), [&](const Access& r) { return conflicts(r, state.writes); }) ||
           std::any_of(c.writes.begin(), c.writes.end(), [&](const Access& w) { return conflicts(w, state.reads); });
  }

  // Adds an access unless the same one is pending already (then their stale sets merge,
  // which only makes conflicts likelier): keeps loops from growing the lists.
  static void add(std::vector<Access>& pending, const Access& a) {
    for (Access& p : pending) {
      if (p.buffer != a.buffer || p.indices.size() != a.indices.size()) continue;
      bool same = true;
      for (size_t i = 0; same && i < a.indices.size(); ++i) same = ir::structural_equal(p.indices[i], a.indices[i]);
      if (!same) continue;
      p.stale.insert(a.stale.begin(), a.stale.end());
      return;
    }
    pending.push_back(a);
  }

  void leaf(const ir::Stmt& s, Pending& state) {
    AccessCollector c = accesses(s);
    for (const Access& r : c.reads) add(state.reads, r);
    for (const Access& w : c.writes) add(state.writes, w);
  }

  std::vector<const ir::VarNode*> thread_vars_;
};

// Puts a barrier before each planned statement, visiting uniform positions only (where
// the planner could have planned one).
class SyncInserter {
 public:
  SyncInserter(const SyncPlanner& planner) : planner_(planner) {}

  ir::Stmt emit(const ir::Stmt& s) {
    ir::Stmt out = rebuild(s);
    if (!planner_.sync_before.count(s.get())) return out;
    return ir::SeqStmtNode::make({gpu::sync_threads(), out});
  }

 private:
  ir::Stmt rebuild(const ir::Stmt& s) {
    if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      std::vector<ir::Stmt> out;
      bool changed = false;
      for (const ir::Stmt& child : seq->seq) {
        out.push_back(emit(child));
        changed = changed || !out.back().same_as(child);
      }
      return changed ? ir::SeqStmtNode::make(std::move(out)) : s;
    }
    if (const auto* alloc = s.as<ir::AllocateNode>()) {
      ir::Stmt body = emit(alloc->body);
      return body.same_as(alloc->body) ? s : ir::AllocateNode::make(alloc->buffer, body);
    }
    if (const auto* loop = s.as<ir::ForNode>(); loop != nullptr && loop->for_kind != ir::ForKind::kVectorized &&
                                                planner_.uniform(loop->min) && planner_.uniform(loop->extent)) {
      ir::Stmt body = emit(loop->body);
      if (body.same_as(loop->body)) return s;
      return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->thread_tag,
                               loop->annotations);
    }
    if (const auto* branch = s.as<ir::IfThenElseNode>(); branch != nullptr && planner_.uniform(branch->condition)) {
      ir::Stmt then_case = emit(branch->then_case);
      ir::Stmt else_case = branch->else_case.defined() ? emit(branch->else_case) : ir::Stmt();
      if (then_case.same_as(branch->then_case) && else_case.same_as(branch->else_case)) return s;
      return ir::IfThenElseNode::make(branch->condition, then_case, else_case);
    }
    return s;
  }

  const SyncPlanner& planner_;
};

ir::Stmt sync_kernel(const ir::Stmt& kernel) {
  std::vector<const ir::ForNode*> launch;
  ir::Stmt body = kernel;
  std::vector<const ir::VarNode*> thread_vars;
  while (const auto* loop = body.as<ir::ForNode>()) {
    if (loop->for_kind != ir::ForKind::kThreadBinding ||
        !(gpu::is_block_tag(loop->thread_tag) || gpu::is_thread_tag(loop->thread_tag))) {
      break;
    }
    // A thread axis of extent 1 does not tell threads apart.
    if (gpu::is_thread_tag(loop->thread_tag) && !ir::is_const_int(loop->extent, 1)) {
      thread_vars.push_back(loop->loop_var.get());
    }
    launch.push_back(loop);
    body = loop->body;
  }
  SyncPlanner planner(thread_vars);
  Pending state;
  planner.scan(body, state);
  if (planner.sync_before.empty()) return kernel;
  ir::Stmt out = SyncInserter(planner).emit(body);
  for (auto it = launch.rbegin(); it != launch.rend(); ++it) {
    const ir::ForNode* l = *it;
    out = ir::ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, out, l->thread_tag, l->annotations);
  }
  return out;
}

ir::Stmt rewrite_top(const ir::Stmt& s) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    std::vector<ir::Stmt> out;
    bool changed = false;
    for (const ir::Stmt& child : seq->seq) {
      out.push_back(rewrite_top(child));
      changed = changed || !out.back().same_as(child);
    }
    return changed ? ir::SeqStmtNode::make(std::move(out)) : s;
  }
  if (const auto* alloc = s.as<ir::AllocateNode>(); alloc != nullptr && alloc->buffer->scope == "global") {
    ir::Stmt body = rewrite_top(alloc->body);
    return body.same_as(alloc->body) ? s : ir::AllocateNode::make(alloc->buffer, body);
  }
  if (!gpu::contains_launch_loop(s)) return s;
  return sync_kernel(s);
}

}  // namespace

ir::PrimFunc insert_thread_syncs(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "insert_thread_syncs runs on block-free IR (the kernel form)");
  ir::Stmt body = rewrite_top(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
