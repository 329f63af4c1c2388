// unify_thread_bindings (passes.h): each kernel's loops bound to blockIdx/threadIdx tags
// become one launch loop per tag around the kernel (lower.h's kernel form); a bound loop
// shorter than its tag's launch extent becomes a guard; a grid too tall for CUDA along y
// or z is folded into x. Not the place of allocations
// (plan_gpu_allocations) nor of barriers (insert_thread_syncs).
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <unordered_map>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/substitute.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

bool is_launch_tag(std::string_view tag) { return gpu::is_block_tag(tag) || gpu::is_thread_tag(tag); }

bool is_launch_loop(const ir::ForNode* op) {
  return op->for_kind == ir::ForKind::kThreadBinding && is_launch_tag(op->thread_tag);
}

// Outermost first: the order of the launch nest.
constexpr std::array<std::string_view, 6> kLaunchOrder = {"blockIdx.z",  "blockIdx.y",  "blockIdx.x",
                                                          "threadIdx.z", "threadIdx.y", "threadIdx.x"};

// The launch extent of every tag used in a kernel, with the checks a launch needs.
class LaunchExtents : public ir::StmtVisitor {
 public:
  explicit LaunchExtents(std::string kernel) : kernel_(std::move(kernel)) {}
  std::map<std::string, int64_t, std::less<>> extent;

 protected:
  using ir::StmtVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    bool launch = is_launch_loop(op);
    if (launch) {
      std::optional<int64_t> e = ir::as_const_int(op->extent);
      if (!e) {
        throw UserError(fmt::format("{}: loop '{}' bound to {} has a non-constant extent; a launch needs constants",
                                    kernel_, op->loop_var.name(), op->thread_tag));
      }
      // Launch indices are 32-bit (CUDA's largest grid dimension is 2^31 - 1 blocks); a
      // loop of more iterations bound to one (three GEMM loops of 4096 fused) cannot launch.
      if (*e > std::numeric_limits<int32_t>::max()) {
        throw UserError(fmt::format("{}: loop '{}' bound to {} has {} iterations, past the {} a launch dimension "
                                    "can index; split it further",
                                    kernel_, op->loop_var.name(), op->thread_tag, *e,
                                    std::numeric_limits<int32_t>::max()));
      }
      // A loop bound to a tag inside another bound to it (a cooperative copy under the
      // compute's threadIdx.x) is the same hardware index: both become the launch variable.
      // That keeps the meaning only when the inner nest does not use the outer variable
      // (every outer instance then repeats the same work, as a cooperative copy does).
      for (const ir::ForNode* outer : open_) {
        if (outer->thread_tag != op->thread_tag) continue;
        if (gpu::uses_var(ir::Stmt(op), [&](const ir::VarNode* v) { return v == outer->loop_var.get(); })) {
          throw UserError(fmt::format("{}: loop '{}' bound to {} lies inside loop '{}' bound to the same tag and uses "
                                      "its variable; nested loops of one tag are one hardware index",
                                      kernel_, op->loop_var.name(), op->thread_tag, outer->loop_var.name()));
        }
      }
      open_.push_back(op);
      int64_t& slot = extent[op->thread_tag];
      slot = std::max(slot, *e);
    } else if (gpu::is_block_tag(first_block_tag_below(op->body)) && !ir::is_const_int(op->extent, 1)) {
      // A kernel cannot run inside a loop: the loop would need a grid-wide barrier.
      throw UserError(fmt::format("{}: loop '{}' (extent {}) encloses loops bound to blockIdx; a kernel cannot run "
                                  "inside a loop: fuse it into the blockIdx loops",
                                  kernel_, op->loop_var.name(), ir::as_const_int(op->extent).value_or(-1)));
    }
    ir::StmtVisitor::visit_(op);
    if (launch) open_.pop_back();
  }

 private:
  static std::string first_block_tag_below(const ir::Stmt& s) {
    struct Finder : ir::StmtVisitor {
      std::string tag;
      using ir::StmtVisitor::visit_;
      void visit_(const ir::ForNode* op) override {
        if (!tag.empty()) return;
        if (op->for_kind == ir::ForKind::kThreadBinding && gpu::is_block_tag(op->thread_tag)) {
          tag = op->thread_tag;
          return;
        }
        ir::StmtVisitor::visit_(op);
      }
    } finder;
    finder.visit(s);
    return finder.tag;
  }

  std::string kernel_;
  std::vector<const ir::ForNode*> open_;  // launch loops around the current statement
};

// Replaces every launch loop by its body, its variable by the tag's launch variable.
class BindingUnifier : public ir::StmtExprMutator {
 public:
  BindingUnifier(const std::map<std::string, int64_t, std::less<>>& extent,
                 const std::map<std::string, ir::Var, std::less<>>& launch_var)
      : extent_(extent), launch_var_(launch_var) {}

 protected:
  using ir::StmtExprMutator::visit_;

  ir::Expr visit_(const ir::VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? ir::Expr(op) : it->second;
  }

  ir::Stmt visit_(const ir::ForNode* op) override {
    if (!is_launch_loop(op)) return ir::StmtExprMutator::visit_(op);
    const ir::Var& launch = launch_var_.at(op->thread_tag);
    ir::Expr value = launch;
    if (!(op->loop_var.dtype() == launch.dtype())) value = ir::cast(op->loop_var.dtype(), value);
    ir::Expr min = mutate_expr(op->min);
    if (!ir::is_const_int(min, 0)) value = value + min;
    map_[op->loop_var.get()] = value;
    ir::Stmt body = visit(op->body);
    map_.erase(op->loop_var.get());
    int64_t extent = *ir::as_const_int(op->extent);
    if (extent < extent_.at(op->thread_tag)) {
      body = ir::IfThenElseNode::make(launch < ir::make_const(launch.dtype(), static_cast<double>(extent)), body);
    }
    return body;
  }

 private:
  const std::map<std::string, int64_t, std::less<>>& extent_;
  const std::map<std::string, ir::Var, std::less<>>& launch_var_;
  ir::VarMap map_;
};

// A global buffer allocated inside a kernel (an intermediate computed at a bound loop)
// lives once per instance of the launch loops around its Allocate: it moves out of the
// kernel with one copy per instance, b[i] -> b'[instance * size + i] (one-dimensional
// buffers) or b'[l0, l1, ..., i...], the instance numbered by those loops' variables.
class GlobalAllocationHoister : public ir::StmtExprMutator {
 public:
  std::vector<ir::Buffer> hoisted;  // outermost first

 protected:
  using ir::StmtExprMutator::visit_;

  ir::Stmt visit_(const ir::ForNode* op) override {
    bool launch = is_launch_loop(op);
    if (launch) launch_.push_back(op);
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    if (launch) launch_.pop_back();
    return s;
  }

  ir::Stmt visit_(const ir::AllocateNode* op) override {
    if (op->buffer->scope != "global") return ir::StmtExprMutator::visit_(op);
    const ir::BufferNode* old = op->buffer.get();
    std::vector<int64_t> shape = old->shape;
    Copy copy;
    if (old->shape.size() == 1) {
      int64_t instances = 1;
      for (const ir::ForNode* l : launch_) instances *= ir::as_const_int(l->extent).value_or(1);
      if (__builtin_mul_overflow(old->shape[0], instances, &shape[0])) {
        throw UserError(fmt::format("global buffer '{}' of {} elements, one copy for each of the {} threads around "
                                    "its allocation, has more elements than an i64 holds",
                                    old->name, old->shape[0], instances));
      }
      // The copies together may pass 2^31 elements (an intermediate computed at a thread
      // loop, tens of thousands of elements per thread): then the offset is i64, since
      // instance * size in i32 would wrap to a negative address.
      const ir::DataType type = index_type(shape[0]);
      ir::Expr instance = ir::make_zero(type);
      int64_t counted = 1;
      for (const ir::ForNode* l : launch_) {
        int64_t extent = ir::as_const_int(l->extent).value_or(1);
        instance = counted == 1 ? index_of(l, type)
                                : instance * ir::make_const(type, double(extent)) + index_of(l, type);
        counted *= extent;
      }
      copy.offset = instance * ir::make_const(type, double(old->shape[0]));
    } else {
      std::vector<int64_t> dims;
      for (const ir::ForNode* l : launch_) {
        dims.push_back(ir::as_const_int(l->extent).value_or(1));
        copy.leading.push_back(index_of(l, ir::DataType::i32()));
      }
      shape.insert(shape.begin(), dims.begin(), dims.end());
    }
    copy.buffer = ir::Buffer::make(old->name, old->dtype, shape, "global");
    copies_.emplace(old, copy);
    hoisted.insert(hoisted.begin(), copy.buffer);
    return visit(op->body);
  }

  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return e;
    return ir::BufferLoadNode::make(it->second.buffer, it->second.select(e.as<ir::BufferLoadNode>()->indices));
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    return ir::BufferStoreNode::make(it->second.buffer, store->value, it->second.select(store->indices));
  }

 private:
  struct Copy {
    ir::Buffer buffer;
    ir::Expr offset;                 // one-dimensional buffers
    std::vector<ir::Expr> leading;   // otherwise
    std::vector<ir::Expr> select(std::vector<ir::Expr> indices) const {
      if (offset.defined()) {
        // The wider of the two: an i64 offset stays i64 whatever the access indexed with.
        const bool wide = offset.dtype() == ir::DataType::i64() || indices[0].dtype() == ir::DataType::i64();
        const ir::DataType type = wide ? ir::DataType::i64() : indices[0].dtype();
        auto as = [&](const ir::Expr& e) { return e.dtype() == type ? e : ir::cast(type, e); };
        indices[0] = as(offset) + as(indices[0]);
        return indices;
      }
      indices.insert(indices.begin(), leading.begin(), leading.end());
      return indices;
    }
  };

  // i32 offsets while every element of the hoisted buffer has one (flatten_buffers' rule).
  static ir::DataType index_type(int64_t elements) {
    return elements > std::numeric_limits<int32_t>::max() ? ir::DataType::i64() : ir::DataType::i32();
  }

  static ir::Expr index_of(const ir::ForNode* l, ir::DataType type) {
    ir::Expr v = l->loop_var;
    if (!(v.dtype() == type)) v = ir::cast(type, v);
    if (ir::is_const_int(l->min, 0)) return v;
    return v - (l->min.dtype() == type ? l->min : ir::cast(type, l->min));
  }

  std::vector<const ir::ForNode*> launch_;
  std::unordered_map<const ir::BufferNode*, Copy> copies_;
};

// Already the kernel form: distinct launch tags outermost, none below, no global buffer.
bool in_kernel_form(const ir::Stmt& kernel) {
  std::vector<std::string> tags;
  ir::Stmt body = kernel;
  while (const auto* loop = body.as<ir::ForNode>()) {
    if (!is_launch_loop(loop) || std::count(tags.begin(), tags.end(), loop->thread_tag)) break;
    tags.push_back(loop->thread_tag);
    body = loop->body;
  }
  if (tags.empty() || gpu::contains_launch_loop(body)) return false;
  struct GlobalAllocFinder : ir::StmtVisitor {
    bool found = false;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::AllocateNode* op) override {
      found = found || op->buffer->scope == "global";
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.visit(body);
  return !finder.found;
}

bool is_thread_loop(const ir::ForNode* op) {
  return op->for_kind == ir::ForKind::kThreadBinding && gpu::is_thread_tag(op->thread_tag);
}

bool contains_thread_loop(const ir::Stmt& s) {
  struct Finder : ir::StmtVisitor {
    bool found = false;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      found = found || is_thread_loop(op);
      if (!found) ir::StmtVisitor::visit_(op);
    }
  } f;
  f.visit(s);
  return f.found;
}

bool stores_shared_or_global(const ir::Stmt& s) {
  struct Finder : ir::StmtVisitor {
    bool found = false;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::BufferStoreNode* op) override {
      found = found || !gpu::is_per_thread_scope(op->buffer->scope);
    }
  } f;
  f.visit(s);
  return f.found;
}

// Per-thread memory cannot carry values between threads: a per-thread buffer written
// under a threadIdx loop (each thread its part) must not be read outside every one.
class PerThreadUseChecker : public ir::StmtExprVisitor {
 public:
  explicit PerThreadUseChecker(std::string kernel) : kernel_(std::move(kernel)) {}
  void finish() const {
    for (const auto& [buffer, use] : uses_) {
      if (use.written_by_threads && use.read_outside) {
        throw UserError(fmt::format("{}: buffer '{}' ({}) is written under loops bound to threadIdx and read outside "
                                    "them; per-thread memory cannot pass values between threads (give it shared "
                                    "scope, or compute its reader under the same thread loop)",
                                    kernel_, buffer->name, buffer->scope));
      }
    }
  }

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    bool thread = is_thread_loop(op);
    depth_ += thread;
    ir::StmtExprVisitor::visit_(op);
    depth_ -= thread;
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (gpu::is_per_thread_scope(op->buffer->scope) && depth_ > 0) uses_[op->buffer.get()].written_by_threads = true;
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    if (gpu::is_per_thread_scope(op->buffer->scope) && depth_ == 0) uses_[op->buffer.get()].read_outside = true;
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  struct Use {
    bool written_by_threads = false, read_outside = false;
  };
  std::string kernel_;
  int depth_ = 0;
  std::map<const ir::BufferNode*, Use> uses_;
};

// Code of a kernel outside every threadIdx loop runs on every thread of the block; what
// it stores to shared or global memory it would store once per thread, racing with
// itself. It runs on thread 0 instead (the sequential meaning: once per block).
class BlockLevelStoreGuard : public ir::StmtMutator {
 public:
  explicit BlockLevelStoreGuard(ir::Expr first_thread) : first_thread_(std::move(first_thread)) {}

  ir::Stmt guard(const ir::Stmt& s) {
    if (const auto* loop = s.as<ir::ForNode>(); loop != nullptr && is_thread_loop(loop)) return s;
    if (!contains_thread_loop(s)) {
      return stores_shared_or_global(s) ? ir::IfThenElseNode::make(first_thread_, s) : s;
    }
    return visit(s);
  }

 protected:
  using ir::StmtMutator::visit_;
  ir::Stmt visit_(const ir::SeqStmtNode* op) override {
    std::vector<ir::Stmt> out;
    bool changed = false;
    for (const ir::Stmt& child : op->seq) {
      out.push_back(guard(child));
      changed = changed || !out.back().same_as(child);
    }
    return changed ? ir::SeqStmtNode::make(std::move(out)) : ir::Stmt(op);
  }
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt body = guard(op->body);
    if (body.same_as(op->body)) return ir::Stmt(op);
    return ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, op->annotations);
  }
  ir::Stmt visit_(const ir::IfThenElseNode* op) override {
    ir::Stmt then_case = guard(op->then_case);
    ir::Stmt else_case = op->else_case.defined() ? guard(op->else_case) : ir::Stmt();
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return ir::Stmt(op);
    return ir::IfThenElseNode::make(op->condition, then_case, else_case);
  }
  ir::Stmt visit_(const ir::AllocateNode* op) override {
    ir::Stmt body = guard(op->body);
    return body.same_as(op->body) ? ir::Stmt(op) : ir::AllocateNode::make(op->buffer, body);
  }

 private:
  ir::Expr first_thread_;
};

ir::Stmt unify_kernel(const ir::Stmt& original, const std::string& name) {
  if (in_kernel_form(original)) return original;
  GlobalAllocationHoister hoister;
  ir::Stmt kernel = hoister.visit(original);
  LaunchExtents extents(name);
  extents.visit(kernel);
  PerThreadUseChecker per_thread(name);
  per_thread.visit(kernel);
  per_thread.finish();
  std::map<std::string, ir::Var, std::less<>> launch_var;
  ir::Expr first_thread;
  for (const auto& [tag, extent] : extents.extent) {
    std::string var_name(tag);
    std::replace(var_name.begin(), var_name.end(), '.', '_');
    ir::Var var(var_name, ir::DataType::i32());
    launch_var.emplace(tag, var);
    if (gpu::is_thread_tag(tag) && extent > 1) {
      ir::Expr is_first = ir::eq(var, 0);
      first_thread = first_thread.defined() ? (first_thread && is_first) : is_first;
    }
  }
  if (first_thread.defined()) kernel = BlockLevelStoreGuard(first_thread).guard(kernel);
  BindingUnifier unifier(extents.extent, launch_var);
  ir::Stmt body = unifier.visit(kernel);
  for (auto it = kLaunchOrder.rbegin(); it != kLaunchOrder.rend(); ++it) {
    auto found = launch_var.find(*it);
    if (found == launch_var.end()) continue;
    ir::Expr extent = ir::make_const(ir::DataType::i32(), static_cast<double>(extents.extent.find(*it)->second));
    body = ir::ForNode::make(found->second, ir::make_zero(ir::DataType::i32()), extent, ir::ForKind::kThreadBinding,
                             body, std::string(*it));
  }
  for (auto it = hoister.hoisted.rbegin(); it != hoister.hoisted.rend(); ++it) body = ir::AllocateNode::make(*it, body);
  return body;
}

// A grid past CUDA's 65535 blocks along blockIdx.y or .z cannot launch (a tensor-core
// conv's row blocks: 32769 x 2 of them). When the whole grid fits along x, the kernel's
// blockIdx loops become one blockIdx.x loop over them all and each former index is read
// off it: x = b % X, y = b / X % Y, z = b / (X * Y). The blocks run in the same order (x
// fastest). Other kernels are left as they are (verify_gpu_code refuses what still
// exceeds a limit).
ir::Stmt fold_grid_into_x(const ir::Stmt& kernel, const Target& target) {
  if (const auto* alloc = kernel.as<ir::AllocateNode>()) {  // hoisted global buffers
    ir::Stmt body = fold_grid_into_x(alloc->body, target);
    return body.same_as(alloc->body) ? kernel : ir::AllocateNode::make(alloc->buffer, body);
  }
  gpu::LaunchNest nest = gpu::peel_launch_nest(kernel);
  std::map<std::string, const ir::ForNode*, std::less<>> block_loop;
  for (const ir::ForNode* l : nest.loops) {
    if (gpu::is_block_tag(l->thread_tag)) block_loop[l->thread_tag] = l;
  }
  auto extent_of = [&](std::string_view tag) -> int64_t {
    auto it = block_loop.find(tag);
    return it == block_loop.end() ? 1 : *ir::as_const_int(it->second->extent);
  };
  const int64_t x = extent_of("blockIdx.x"), y = extent_of("blockIdx.y"), z = extent_of("blockIdx.z");
  if (target.grid_launch(x, y, z) != Target::GridLaunch::kFoldedIntoX) return kernel;
  ir::Var fused("blockIdx_x", ir::DataType::i32());
  ir::VarMap map;
  auto bind = [&](std::string_view tag, ir::Expr value) {
    auto it = block_loop.find(tag);
    if (it != block_loop.end()) map[it->second->loop_var.get()] = value;
  };
  bind("blockIdx.x", ir::floormod(fused, x));
  bind("blockIdx.y", ir::floormod(ir::floordiv(fused, x), y));
  bind("blockIdx.z", ir::floordiv(fused, x * y));
  std::vector<const ir::ForNode*> threads;
  for (const ir::ForNode* l : nest.loops) {
    if (!gpu::is_block_tag(l->thread_tag)) threads.push_back(l);
  }
  ir::Stmt body = gpu::LaunchNest{threads, {}}.with_launch(ir::substitute(nest.body, map));
  return ir::ForNode::make(fused, ir::make_zero(ir::DataType::i32()),
                           ir::make_const(ir::DataType::i32(), static_cast<double>(x * y * z)),
                           ir::ForKind::kThreadBinding, body, "blockIdx.x");
}

// Names what a statement left outside every kernel computes, for the error message.
std::string describe(const ir::Stmt& s) {
  struct Finder : ir::StmtVisitor {
    std::string loop, buffer;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (loop.empty()) loop = op->loop_var.name();
      ir::StmtVisitor::visit_(op);
    }
    void visit_(const ir::BufferStoreNode* op) override {
      if (buffer.empty()) buffer = op->buffer->name;
    }
  } f;
  f.visit(s);
  if (!f.loop.empty()) return fmt::format("the loop nest of '{}' writing '{}'", f.loop, f.buffer);
  return fmt::format("the statement writing '{}'", f.buffer);
}

// The loop nests holding launch loops at the top of `s` (through sequences and any
// allocation): each would be a kernel of its own.
int launch_nests(const ir::Stmt& s) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    int n = 0;
    for (const ir::Stmt& child : seq->seq) n += launch_nests(child);
    return n;
  }
  if (const auto* alloc = s.as<ir::AllocateNode>()) return launch_nests(alloc->body);
  return gpu::contains_launch_loop(s) ? 1 : 0;
}

// Rebuilds the top of the body (sequences, allocations) with each kernel unified.
class TopLevelRewriter {
 public:
  TopLevelRewriter(const ir::PrimFunc& func, const Target& target) : func_(func), target_(target) {}

  ir::Stmt rewrite(const ir::Stmt& s) {
    if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      std::vector<ir::Stmt> out;
      bool changed = false;
      for (const ir::Stmt& child : seq->seq) {
        out.push_back(rewrite(child));
        changed = changed || !out.back().same_as(child);
      }
      return changed ? ir::SeqStmtNode::make(std::move(out)) : s;
    }
    if (const auto* alloc = s.as<ir::AllocateNode>()) {
      if (!gpu::contains_launch_loop(s) || alloc->buffer->scope == "global") {
        ir::Stmt body = rewrite(alloc->body);
        return body.same_as(alloc->body) ? s : ir::AllocateNode::make(alloc->buffer, body);
      }
    }
    if (const auto* alloc = s.as<ir::AllocateNode>()) {
      // Shared and local memory live in one kernel: the nests under it must be one.
      if (launch_nests(alloc->body) > 1) {
        throw UserError(fmt::format("function '{}': buffer '{}' ({}) is used by several loop nests bound to blockIdx "
                                    "(several kernels); {} memory lives in one kernel: compute it at a loop of its "
                                    "consumer's kernel (compute_at), or give it global scope",
                                    func_->name, alloc->buffer->name, alloc->buffer->scope, alloc->buffer->scope));
      }
    }
    if (!gpu::contains_launch_loop(s)) {
      throw UserError(fmt::format("function '{}': {} is not bound to GPU threads; bind its loops to blockIdx/threadIdx "
                                  "(search::auto_bind gives every block a default binding)",
                                  func_->name, describe(s)));
    }
    ir::Stmt kernel = unify_kernel(s, fmt::format("kernel {} of function '{}'", kernels_++, func_->name));
    return fold_grid_into_x(kernel, target_);
  }

 private:
  const ir::PrimFunc& func_;
  const Target& target_;
  int kernels_ = 0;
};

}  // namespace

ir::PrimFunc unify_thread_bindings(const ir::PrimFunc& func, const Target& target) {
  DRAGON_CHECK(func.root_block() == nullptr, "unify_thread_bindings runs on block-free IR (after lower_blocks)");
  ir::Stmt body = TopLevelRewriter(func, target).rewrite(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
