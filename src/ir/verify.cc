// The IR verifier: one walk over a PrimFunc that tracks which variables and buffers are
// in scope, and reports each broken rule as a sentence naming the function and the
// block, loop or buffer at fault. It never repairs the IR.
#include "dragon/ir/verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/support/env.h"
#include "dragon/support/error.h"

namespace dragon::ir {
namespace {

bool valid_thread_tag(std::string_view tag) {
  static const std::set<std::string_view> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                   "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                                   "vthread.x",   "vthread.y",   "vthread.z"};
  return kTags.count(tag) > 0;
}

bool contains(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(), [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

// Whether any block is left in `body` (none once lowered).
bool contains_block(const Stmt& body) {
  struct Finder : StmtVisitor {
    bool found = false;
    void visit_(const BlockRealizeNode*) override { found = true; }
  } finder;
  finder.visit(body);
  return finder.found;
}

// Direct accesses of one block: its body and init, not counting nested blocks (whose
// accesses are their own) nor buffers allocated inside it.
struct BlockFrame {
  const BlockNode* block = nullptr;
  std::vector<const BufferNode*> stored;  // first-access order, for stable messages
  std::vector<const BufferNode*> loaded;
  std::unordered_set<const BufferNode*> local;  // allocated inside the block
};

class Verifier : public StmtFunctor<void> {
 public:
  explicit Verifier(const PrimFunc& func) : func_(func) {}

  std::vector<std::string> run() {
    check_params();
    check_root();
    visit(func_->body);
    check_outputs_written();
    check_block_names();
    return std::move(problems_);
  }

  // Called by ExprChecker for every variable and load it meets.
  void use_var(const VarNode* var) {
    if (!visible_.count(var)) report("variable '{}' used in {} is not defined there", var->name, site_);
  }
  void use_buffer(const BufferNode* buffer, bool store) {
    if (!buffers_.count(buffer)) {
      report("buffer '{}' used in {} is neither a parameter nor allocated in an enclosing block", buffer->name,
             site_);
    }
    if (store) written_.insert(buffer);
    if (frames_.empty()) return;
    auto& list = store ? frames_.back().stored : frames_.back().loaded;
    if (std::find(list.begin(), list.end(), buffer) == list.end()) list.push_back(buffer);
  }

  void misplaced_effect(const CallNode* call) {
    report("{}() has no value and may only be evaluated as a statement, but is used in {}",
           intrinsic_name(call->op), site_);
  }

 protected:
  void visit_(const ForNode* op) override {
    std::string loop = fmt::format("loop '{}'", op->loop_var.name());
    check_expr(op->min, "the bounds of " + loop);
    check_expr(op->extent, "the bounds of " + loop);
    if (!(op->min.dtype() == op->loop_var.dtype()) || !(op->extent.dtype() == op->loop_var.dtype())) {
      report("{} of type {} has bounds of type {} and {}", loop, to_string(op->loop_var.dtype()),
             to_string(op->min.dtype()), to_string(op->extent.dtype()));
    }
    if (auto extent = as_const_int(op->extent); extent && *extent < 0) {
      report("{} has negative extent {}", loop, *extent);
    }
    if (op->for_kind == ForKind::kThreadBinding && !valid_thread_tag(op->thread_tag)) {
      report("{} is bound to an invalid thread tag '{}'", loop, op->thread_tag);
    }
    if (op->for_kind != ForKind::kThreadBinding && !op->thread_tag.empty()) {
      report("{} is {} but has thread tag '{}'", loop, for_kind_name(op->for_kind), op->thread_tag);
    }
    define(op->loop_var, loop);
    bool inserted = visible_.insert(op->loop_var.get()).second;
    visit(op->body);
    if (inserted) visible_.erase(op->loop_var.get());
  }

  void visit_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    std::string name = fmt::format("block '{}'", block->name);
    if (op->iter_values.size() != block->iter_vars.size()) {
      report("{} has {} iteration variables but {} bindings", name, block->iter_vars.size(), op->iter_values.size());
    }
    for (size_t i = 0; i < op->iter_values.size(); ++i) {
      check_expr(op->iter_values[i], "the bindings of " + name);
      if (i < block->iter_vars.size() && !(op->iter_values[i].dtype() == block->iter_vars[i].var.dtype())) {
        report("{} binds '{}' of type {} to a value of type {}", name, block->iter_vars[i].var.name(),
               to_string(block->iter_vars[i].var.dtype()), to_string(op->iter_values[i].dtype()));
      }
    }
    if (op->predicate.defined()) {
      check_expr(op->predicate, "the predicate of " + name);
      if (!op->predicate.dtype().is_bool()) report("the predicate of {} is not bool", name);
    }
    visit(Stmt(block));
  }

  void visit_(const BlockNode* op) override {
    std::string name = fmt::format("block '{}'", op->name);
    block_names_[op->name]++;
    // A block sees only its own iteration variables (and loops nested inside it).
    std::unordered_set<const VarNode*> outer_visible = std::move(visible_);
    visible_.clear();
    bool has_reduce = false;
    for (const IterVar& iv : op->iter_vars) {
      std::string var = fmt::format("iteration variable '{}' of {}", iv.var.name(), name);
      check_expr(iv.dom.min, "the domain of " + var);
      check_expr(iv.dom.extent, "the domain of " + var);
      if (!(iv.dom.min.dtype() == iv.var.dtype()) || !(iv.dom.extent.dtype() == iv.var.dtype())) {
        report("{} of type {} has a domain of type {} and {}", var, to_string(iv.var.dtype()),
               to_string(iv.dom.min.dtype()), to_string(iv.dom.extent.dtype()));
      }
      if (auto extent = as_const_int(iv.dom.extent); extent && *extent < 0) {
        report("{} has negative extent {}", var, *extent);
      }
      has_reduce |= iv.kind == IterKind::kReduce;
      define(iv.var, var);
    }
    for (const IterVar& iv : op->iter_vars) visible_.insert(iv.var.get());
    if (op->init.defined() && !has_reduce) report("{} has an init but no reduce iteration variable", name);

    std::vector<const BufferNode*> added;
    for (const Buffer& b : op->alloc_buffers) {
      allocate(b, name);
      if (buffers_.insert(b.get()).second) added.push_back(b.get());
    }
    check_regions(op->reads, name, "read");
    check_regions(op->writes, name, "write");

    frames_.push_back(BlockFrame{op, {}, {}, {}});
    for (const Buffer& b : op->alloc_buffers) frames_.back().local.insert(b.get());
    std::string outer_site = std::move(site_);
    site_ = name;
    if (op->init.defined()) visit(op->init);
    visit(op->body);
    site_ = std::move(outer_site);
    check_accesses(frames_.back());
    frames_.pop_back();

    for (const BufferNode* b : added) buffers_.erase(b);
    visible_ = std::move(outer_visible);
  }

  void visit_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) visit(s);
  }

  void visit_(const IfThenElseNode* op) override {
    check_expr(op->condition, site_);
    visit(op->then_case);
    if (op->else_case.defined()) visit(op->else_case);
  }

  void visit_(const BufferStoreNode* op) override {
    if (static_cast<int>(op->indices.size()) != op->buffer.ndim()) {
      report("a store to buffer '{}' in {} has {} indices, the buffer has rank {}", op->buffer->name, site_,
             op->indices.size(), op->buffer.ndim());
    }
    use_buffer(op->buffer.get(), /*store=*/true);
    check_expr(op->value, site_);
    for (const Expr& index : op->indices) check_expr(index, site_);
  }

  void visit_(const AllocateNode* op) override {
    allocate(op->buffer, "an allocation in " + site_);
    bool inserted = buffers_.insert(op->buffer.get()).second;
    if (!frames_.empty()) frames_.back().local.insert(op->buffer.get());
    visit(op->body);
    if (inserted) buffers_.erase(op->buffer.get());
  }

  void visit_(const EvaluateNode* op) override {
    // An effect intrinsic (sync_threads) is allowed here, as the whole value, and only here.
    const auto* call = op->value.as<CallNode>();
    if (call != nullptr && intrinsic_is_effect(call->op)) return;
    check_expr(op->value, site_);
  }

 private:
  template <typename... Args>
  void report(fmt::format_string<Args...> format, Args&&... args) {
    problems_.push_back(fmt::format("function '{}': ", func_->name) + fmt::format(format, std::forward<Args>(args)...));
  }

  void check_expr(const Expr& e, std::string site);

  void define(const Var& var, const std::string& where) {
    auto [it, inserted] = definitions_.emplace(var.get(), where);
    if (!inserted) report("variable '{}' is defined twice, by {} and by {}", var.name(), it->second, where);
  }

  void allocate(const Buffer& buffer, const std::string& where) {
    auto [it, inserted] = allocations_.emplace(buffer.get(), where);
    if (!inserted) report("buffer '{}' is allocated twice, by {} and by {}", buffer->name, it->second, where);
  }

  void check_params() {
    std::unordered_set<const BufferNode*> seen;
    for (const Param& p : func_->params) {
      if (!seen.insert(p.buffer.get()).second) report("parameter '{}' appears twice", p.buffer->name);
      if (p.buffer->scope != "global") {
        report("parameter '{}' is in scope '{}', not global", p.buffer->name, p.buffer->scope);
      }
      buffers_.insert(p.buffer.get());
      allocations_.emplace(p.buffer.get(), fmt::format("parameter '{}'", p.buffer->name));
    }
  }

  void check_root() {
    const auto* realize = func_->body.as<BlockRealizeNode>();
    // A lowered function has no block at all and any statement as its body (lower.h).
    if (realize == nullptr && !contains_block(func_->body)) return;
    if (realize == nullptr || realize->block->name != "root") {
      report("the body is not the realization of a block named 'root'");
      return;
    }
    if (!realize->block->iter_vars.empty()) {
      report("block 'root' has {} iteration variables, it must have none", realize->block->iter_vars.size());
    }
  }

  void check_outputs_written() {
    for (const Param& p : func_->params) {
      if (p.role == ParamRole::kOutput && !written_.count(p.buffer.get())) {
        report("output parameter '{}' is never written", p.buffer->name);
      }
    }
  }

  void check_block_names() {
    for (const auto& [name, count] : block_names_) {
      if (count > 1) report("block name '{}' is used by {} blocks", name, count);
    }
  }

  void check_regions(const std::vector<BufferRegion>& regions, const std::string& block, std::string_view kind) {
    for (const BufferRegion& r : regions) {
      std::string site = fmt::format("the {} region of buffer '{}' of {}", kind, r.buffer->name, block);
      if (static_cast<int>(r.region.size()) != r.buffer.ndim()) {
        report("{} has rank {}, the buffer has rank {}", site, r.region.size(), r.buffer.ndim());
      }
      if (!buffers_.count(r.buffer.get())) {
        report("buffer '{}' used in {} is neither a parameter nor allocated in an enclosing block", r.buffer->name,
               site);
      }
      for (const Range& range : r.region) {
        check_expr(range.min, site);
        check_expr(range.extent, site);
      }
    }
  }

  void check_accesses(const BlockFrame& frame) {
    const BlockNode* block = frame.block;
    // The root block stands for the whole function; its regions stay empty by convention.
    if (frames_.size() == 1 && block->name == "root") return;
    for (const BufferNode* b : frame.stored) {
      if (frame.local.count(b)) continue;
      if (!contains(block->writes, b)) {
        report("block '{}' stores to buffer '{}', which is not in its writes", block->name, b->name);
      }
    }
    for (const BufferNode* b : frame.loaded) {
      if (frame.local.count(b)) continue;
      // A reduction's update reads its own output: covered by the write region.
      if (!contains(block->reads, b) && !contains(block->writes, b)) {
        report("block '{}' loads buffer '{}', which is in neither its reads nor its writes", block->name, b->name);
      }
    }
  }

  const PrimFunc& func_;
  std::vector<std::string> problems_;
  std::unordered_set<const VarNode*> visible_;
  std::unordered_map<const VarNode*, std::string> definitions_;
  std::unordered_set<const BufferNode*> buffers_;  // in scope here
  std::unordered_map<const BufferNode*, std::string> allocations_;
  std::unordered_set<const BufferNode*> written_;
  std::map<std::string, int> block_names_;
  std::vector<BlockFrame> frames_;
  std::string site_ = "the function body";
};

// Walks one expression on behalf of the Verifier.
class ExprChecker : public ExprVisitor {
 public:
  explicit ExprChecker(Verifier& verifier) : verifier_(verifier) {}

 protected:
  void visit_(const VarNode* op) override { verifier_.use_var(op); }
  void visit_(const CallNode* op) override {
    if (intrinsic_is_effect(op->op)) verifier_.misplaced_effect(op);
    ExprVisitor::visit_(op);
  }
  void visit_(const BufferLoadNode* op) override {
    verifier_.use_buffer(op->buffer.get(), /*store=*/false);
    ExprVisitor::visit_(op);
  }

 private:
  Verifier& verifier_;
};

void Verifier::check_expr(const Expr& e, std::string site) {
  if (!e.defined()) return;
  std::string outer = std::move(site_);
  site_ = std::move(site);
  ExprChecker(*this).visit(e);
  site_ = std::move(outer);
}

}  // namespace

std::vector<std::string> find_ir_problems(const PrimFunc& func) {
  DRAGON_CHECK(func.defined(), "verification of an undefined function");
  return Verifier(func).run();
}

void check_well_formed(const PrimFunc& func, std::string_view context) {
  std::vector<std::string> problems = find_ir_problems(func);
  if (problems.empty()) return;
  std::string message = fmt::format("ill-formed IR {}:", context);
  for (const std::string& p : problems) message += "\n  " + p;
  throw InternalError(message);
}

bool ir_checks_enabled() {
#ifdef NDEBUG
  return env_verify_ir().value_or(false);
#else
  return env_verify_ir().value_or(true);
#endif
}

}  // namespace dragon::ir
