// Helpers shared by the GPU passes: tags, scopes, variable uses, kernel discovery.
#include "gpu_ir_util.h"

#include "dragon/ir/functor.h"

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

}  // namespace dragon::lower::gpu
