// Helpers shared by the GPU passes: tags, scopes, variable uses, kernel discovery.
#include "gpu_ir_util.h"

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"

namespace dragon::lower::gpu {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

class VarFinder : public ir::StmtExprVisitor {
 public:
  explicit VarFinder(const std::function<bool(const ir::VarNode*)>& pred) : pred_(pred) {}
  bool found = false;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::VarNode* op) override { found = found || pred_(op); }
  void visit_(const ir::ForNode* op) override {
    if (pred_(op->loop_var.get())) found = true;
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  const std::function<bool(const ir::VarNode*)>& pred_;
};

class LaunchLoopFinder : public ir::StmtVisitor {
 public:
  bool found = false;

 protected:
  using ir::StmtVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::kThreadBinding && (is_block_tag(op->thread_tag) || is_thread_tag(op->thread_tag))) {
      found = true;
      return;
    }
    ir::StmtVisitor::visit_(op);
  }
};

void collect_kernels(const ir::Stmt& s, std::vector<ir::Stmt>& kernels, std::vector<ir::Stmt>* unbound) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& child : seq->seq) collect_kernels(child, kernels, unbound);
    return;
  }
  if (const auto* alloc = s.as<ir::AllocateNode>()) {
    if (!contains_launch_loop(s) || alloc->buffer->scope == "global") {
      collect_kernels(alloc->body, kernels, unbound);
      return;
    }
  }
  if (const auto* realize = s.as<ir::BlockRealizeNode>()) {
    if (realize->block->name == "root") {
      collect_kernels(realize->block->body, kernels, unbound);
      return;
    }
  }
  if (contains_launch_loop(s)) {
    kernels.push_back(s);
  } else if (unbound != nullptr) {
    unbound->push_back(s);
  }
}

}  // namespace

bool is_block_tag(std::string_view tag) { return starts_with(tag, "blockIdx."); }
bool is_thread_tag(std::string_view tag) { return starts_with(tag, "threadIdx."); }
bool is_vthread_tag(std::string_view tag) { return starts_with(tag, "vthread"); }
bool is_shared_scope(std::string_view scope) { return scope == "shared" || scope == "shared.dyn"; }
bool is_per_thread_scope(std::string_view scope) {
  return scope == "local" || scope == "warp" || starts_with(scope, "wmma.");
}

const ir::ForNode* as_bound_loop(const ir::Stmt& s, bool (*pred)(std::string_view)) {
  const auto* loop = s.as<ir::ForNode>();
  if (loop == nullptr || loop->for_kind != ir::ForKind::kThreadBinding || !pred(loop->thread_tag)) return nullptr;
  return loop;
}

bool uses_var(const ir::Expr& e, const std::function<bool(const ir::VarNode*)>& pred) {
  VarFinder f(pred);
  f.visit(e);
  return f.found;
}

bool uses_var(const ir::Stmt& s, const std::function<bool(const ir::VarNode*)>& pred) {
  VarFinder f(pred);
  f.visit(s);
  return f.found;
}

bool contains_launch_loop(const ir::Stmt& s) {
  LaunchLoopFinder f;
  f.visit(s);
  return f.found;
}

std::vector<ir::Stmt> find_kernels(const ir::Stmt& body, std::vector<ir::Stmt>* unbound) {
  std::vector<ir::Stmt> kernels;
  collect_kernels(body, kernels, unbound);
  return kernels;
}

ir::Stmt sync_threads() { return ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::SyncThreads, {})); }
ir::Stmt async_commit_group() {
  return ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::AsyncCommitGroup, {}));
}
ir::Stmt async_wait_group(int64_t in_flight) {
  return ir::EvaluateNode::make(ir::CallNode::make(
      ir::Intrinsic::AsyncWaitGroup, {ir::make_const(ir::DataType::i32(), static_cast<double>(in_flight))}));
}

LaunchNest peel_launch_nest(const ir::Stmt& kernel) {
  LaunchNest nest;
  nest.body = kernel;
  while (const auto* loop = nest.body.as<ir::ForNode>()) {
    if (loop->for_kind != ir::ForKind::kThreadBinding || !(is_block_tag(loop->thread_tag) || is_thread_tag(loop->thread_tag))) {
      break;
    }
    nest.loops.push_back(loop);
    nest.body = loop->body;
  }
  return nest;
}

ir::Stmt LaunchNest::with_launch(ir::Stmt new_body) const {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    const ir::ForNode* l = *it;
    new_body = ir::ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, new_body, l->thread_tag, l->annotations);
  }
  return new_body;
}

ir::Stmt rewrite_each_kernel(const ir::Stmt& top, std::set<std::string>& global_names,
                             const std::function<ir::Stmt(const ir::Stmt&)>& rewrite_kernel) {
  if (const auto* seq = top.as<ir::SeqStmtNode>()) {
    std::vector<ir::Stmt> out;
    bool changed = false;
    for (const ir::Stmt& child : seq->seq) {
      out.push_back(rewrite_each_kernel(child, global_names, rewrite_kernel));
      changed = changed || !out.back().same_as(child);
    }
    return changed ? ir::SeqStmtNode::make(std::move(out)) : top;
  }
  if (const auto* alloc = top.as<ir::AllocateNode>(); alloc != nullptr && alloc->buffer->scope == "global") {
    global_names.insert(alloc->buffer->name);
    ir::Stmt body = rewrite_each_kernel(alloc->body, global_names, rewrite_kernel);
    return body.same_as(alloc->body) ? top : ir::AllocateNode::make(alloc->buffer, body);
  }
  if (!contains_launch_loop(top)) return top;
  return rewrite_kernel(top);
}

}  // namespace dragon::lower::gpu
