// inject_software_pipeline (passes.h): a loop annotated with software_pipeline_stage
// becomes a prologue, a steady state and an epilogue in which statement j works on
// iteration t - stage[j] at time step t, buffers allocated in the loop body get one copy
// per iteration in flight, and statements of async stages are issued as cp.async groups
// with the waits and barriers their readers need. Not a scheduler: the stages, order and
// async stages come from the schedule's annotations, and are checked here.
#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/substitute.h"
#include "dragon/lower/async_copy_source.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

// Each slot of a versioned shared buffer starts 16-byte aligned (cp.async and ldmatrix
// move 16-byte rows).
constexpr int64_t kSlotAlignmentBytes = 16;

// "0 0 1", "[0, 0, 1]" or "0,0,1" -> {0, 0, 1}.
std::vector<int64_t> parse_int_list(const std::string& loop, std::string_view key, const ir::AnnotationValue& value) {
  if (const auto* single = std::get_if<int64_t>(&value)) return {*single};
  const auto* text = std::get_if<std::string>(&value);
  auto bad = [&](const std::string& why) {
    return UserError(fmt::format("software pipeline of loop '{}': annotation {} {}", loop, key, why));
  };
  if (text == nullptr) throw bad("must be a list of integers written as a string (\"0 0 1\")");
  std::vector<int64_t> out;
  const char* p = text->data();
  const char* end = p + text->size();
  while (p < end) {
    if (*p == ' ' || *p == ',' || *p == '[' || *p == ']') {
      ++p;
      continue;
    }
    int64_t v = 0;
    auto [next, error] = std::from_chars(p, end, v);
    if (error != std::errc()) throw bad(fmt::format("\"{}\" is not a list of integers", *text));
    out.push_back(v);
    p = next;
  }
  return out;
}

std::string join_ints(const std::vector<int64_t>& values) { return fmt::format("{}", fmt::join(values, " ")); }

// The buffers a statement reads and writes, and whether each of its stores is a copy from
// global memory into shared memory that cp.async can issue (async_copy_source.h):
// `copy_problem` says why not.
class StatementAccesses : public ir::StmtExprVisitor {
 public:
  std::set<const ir::BufferNode*> reads, writes;
  std::string copy_problem;
  bool stores_constants_only = true;  // every store writes a constant (and there is one)

  // Copies nothing: no load, each store a constant. A copy whose every guarded load the
  // simplifier proved out of range becomes this (a transposed convolution whose taps all
  // land on the zeros its stride inserts: 2x8x9 input, padding 3, dilation 2).
  bool fetches_nothing() const { return reads.empty() && !writes.empty() && stores_constants_only; }

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::BufferLoadNode* op) override {
    reads.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    writes.insert(op->buffer.get());
    ir::Expr value = op->value;
    while (const auto* cast = value.as<ir::CastNode>()) value = cast->value;
    stores_constants_only = stores_constants_only && (value.as<ir::IntImmNode>() || value.as<ir::FloatImmNode>());
    if (copy_problem.empty()) async_copy_source(op, &copy_problem);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::EvaluateNode* op) override {
    if (copy_problem.empty()) copy_problem = "it evaluates an expression for its effect";
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::AllocateNode* op) override {
    if (copy_problem.empty()) copy_problem = fmt::format("it allocates {}", op->buffer->name);
    ir::StmtExprVisitor::visit_(op);
  }
};

struct PipelineStatement {
  ir::Stmt stmt;
  int64_t stage = 0;
  int64_t order = 0;
  bool async = false;
  std::set<const ir::BufferNode*> reads, writes;
  bool touches(const ir::BufferNode* b) const { return reads.count(b) || writes.count(b); }
};

// A buffer of the loop body with one slot per iteration in flight: slot (i mod versions)
// holds iteration i's contents at [slot * slot_elements, +original size).
struct Versioned {
  ir::Buffer buffer;
  int64_t versions = 1;
  int64_t slot_elements = 0;
};

// One statement at one time step, after ir::substitute gave it the step's iteration:
// versioned buffers are indexed in that iteration's slot, and inner loops and
// allocations (an inner pipeline's slots) get fresh variables and buffers: the statement
// appears once per phase, and a variable or buffer is defined once.
class StatementInstance : public ir::StmtExprMutator {
 public:
  StatementInstance(ir::Expr relative_iteration, const std::unordered_map<const ir::BufferNode*, Versioned>& versioned)
      : relative_(std::move(relative_iteration)), versioned_(versioned) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Var fresh(op->loop_var.name(), op->loop_var.dtype());
    ir::Stmt body = ir::substitute(visit(op->body), {{op->loop_var.get(), fresh}});
    return ir::ForNode::make(fresh, visit(op->min), visit(op->extent), op->for_kind, body, op->thread_tag,
                             op->annotations);
  }
  ir::Stmt visit_(const ir::AllocateNode* op) override {
    const ir::BufferNode* b = op->buffer.get();
    ir::Buffer fresh = ir::Buffer::make(b->name, b->dtype, b->shape, b->scope);
    renamed_[b] = fresh;
    return ir::AllocateNode::make(fresh, visit(op->body));
  }
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    const auto* load = e.as<ir::BufferLoadNode>();
    if (auto r = renamed_.find(op->buffer.get()); r != renamed_.end()) {
      return ir::BufferLoadNode::make(r->second, load->indices);
    }
    auto it = versioned_.find(op->buffer.get());
    if (it == versioned_.end()) return e;
    return ir::BufferLoadNode::make(it->second.buffer, {slotted(it->second, load->indices)});
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    const auto* store = s.as<ir::BufferStoreNode>();
    if (auto r = renamed_.find(op->buffer.get()); r != renamed_.end()) {
      return ir::BufferStoreNode::make(r->second, store->value, store->indices);
    }
    auto it = versioned_.find(op->buffer.get());
    if (it == versioned_.end()) return s;
    return ir::BufferStoreNode::make(it->second.buffer, store->value, {slotted(it->second, store->indices)});
  }

 private:
  ir::Expr slotted(const Versioned& v, const std::vector<ir::Expr>& indices) const {
    DRAGON_CHECK(indices.size() == 1, "inject_software_pipeline runs on flattened buffers");
    ir::DataType t = indices[0].dtype();
    ir::Expr relative = relative_.dtype() == t ? relative_ : ir::cast(t, relative_);
    return ir::floormod(relative, ir::make_const(t, static_cast<double>(v.versions))) *
               ir::make_const(t, static_cast<double>(v.slot_elements)) +
           indices[0];
  }

  ir::Expr relative_;
  const std::unordered_map<const ir::BufferNode*, Versioned>& versioned_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> renamed_;  // allocated inside the statement
};

// The statement with async_copy on its outermost loop (a unit loop around it when it is
// not a loop), so code generation issues its stores as cp.async.
ir::Stmt mark_async(const ir::Stmt& s, const std::string& name) {
  if (const auto* loop = s.as<ir::ForNode>()) {
    ir::Annotations annotations = loop->annotations;
    annotations[std::string(kAsyncCopyAnnotation)] = int64_t{1};
    return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body, loop->thread_tag,
                             std::move(annotations));
  }
  return ir::ForNode::make(ir::Var(name + "_async", ir::DataType::i32()), ir::make_zero(ir::DataType::i32()),
                           ir::make_one(ir::DataType::i32()), ir::ForKind::kSerial, s, {},
                           {{std::string(kAsyncCopyAnnotation), int64_t{1}}});
}

class Pipeline {
 public:
  Pipeline(const ir::ForNode* loop, ir::Stmt body) : loop_(loop), body_(std::move(body)), name_(loop->loop_var.name()) {}

  ir::Stmt build() {
    read_annotations();
    split_body();
    check_dependences();
    plan_versions();
    return assemble();
  }

 private:
  template <typename... Args>
  UserError error(fmt::format_string<Args...> format, Args&&... args) const {
    return UserError(fmt::format("software pipeline of loop '{}': {}", name_,
                                 fmt::format(format, std::forward<Args>(args)...)));
  }

  void read_annotations() {
    const ir::Annotations& a = loop_->annotations;
    stages_ = parse_int_list(name_, kSoftwarePipelineStage, a.find(kSoftwarePipelineStage)->second);
    if (auto it = a.find(kSoftwarePipelineOrder); it != a.end()) {
      orders_ = parse_int_list(name_, kSoftwarePipelineOrder, it->second);
    } else {
      orders_.resize(stages_.size());
      std::iota(orders_.begin(), orders_.end(), 0);
    }
    if (auto it = a.find(kSoftwarePipelineAsyncStages); it != a.end()) {
      for (int64_t s : parse_int_list(name_, kSoftwarePipelineAsyncStages, it->second)) async_stages_.insert(s);
    }
    if (orders_.size() != stages_.size()) {
      throw error("{} lists {} stages but {} lists {} positions", kSoftwarePipelineStage, stages_.size(),
                  kSoftwarePipelineOrder, orders_.size());
    }
    std::vector<int64_t> sorted = orders_;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != static_cast<int64_t>(i)) {
        throw error("{} \"{}\" is not a permutation of 0..{}", kSoftwarePipelineOrder, join_ints(orders_),
                    sorted.size() - 1);
      }
    }
    for (int64_t s : stages_) {
      if (s < 0) throw error("{} \"{}\" has a negative stage", kSoftwarePipelineStage, join_ints(stages_));
    }
    auto min = ir::as_const_int(loop_->min);
    auto extent = ir::as_const_int(loop_->extent);
    if (!min || !extent) throw error("its bounds are not constants");
    min_ = *min;
    extent_ = *extent;
    max_stage_ = *std::max_element(stages_.begin(), stages_.end());
  }

  // The body is (allocations of per-iteration buffers around) the sequence of statements
  // the annotations describe, one entry per statement.
  void split_body() {
    ir::Stmt s = body_;
    while (const auto* alloc = s.as<ir::AllocateNode>()) {
      allocated_.push_back(alloc->buffer);
      s = alloc->body;
    }
    std::vector<ir::Stmt> stmts;
    if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      stmts = seq->seq;
    } else {
      stmts = {s};
    }
    if (stmts.size() != stages_.size()) {
      throw error("{} \"{}\" has {} entries but the loop body holds {} statements (after the allocations of its "
                  "per-iteration buffers)",
                  kSoftwarePipelineStage, join_ints(stages_), stages_.size(), stmts.size());
    }
    for (size_t j = 0; j < stmts.size(); ++j) {
      StatementAccesses acc;
      acc.visit(stmts[j]);
      PipelineStatement st{stmts[j], stages_[j], orders_[j], async_stages_.count(stages_[j]) > 0, acc.reads,
                           acc.writes};
      // A copy left with nothing to fetch stores its constants in its stage as they are:
      // cp.async has no source to read, and the barrier before the readers covers them.
      if (st.async && !acc.copy_problem.empty() && acc.fetches_nothing()) st.async = false;
      if (st.async && !acc.copy_problem.empty()) {
        throw error("statement {} is in async stage {}, but cp.async can only copy global memory into shared memory "
                    "and {}",
                    j, st.stage, acc.copy_problem);
      }
      statements_.push_back(std::move(st));
    }
  }

  bool allocated_in_body(const ir::BufferNode* b) const {
    return std::any_of(allocated_.begin(), allocated_.end(), [&](const ir::Buffer& a) { return a.get() == b; });
  }

  // The pipelined order runs iteration i of statement j at time i + stage[j], position
  // order[j] within the step; it must keep every dependence of the original loop.
  void check_dependences() const {
    const size_t n = statements_.size();
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        const PipelineStatement& x = statements_[a];
        const PipelineStatement& y = statements_[b];
        for (const ir::BufferNode* buf : x.writes) {
          if (y.touches(buf) && std::pair(x.stage, x.order) > std::pair(y.stage, y.order)) {
            throw error("statement {} (stage {}, order {}) writes {}, which statement {} (stage {}, order {}) uses "
                        "after it in the same iteration, but would run first",
                        a, x.stage, x.order, buf->name, b, y.stage, y.order);
          }
        }
        for (const ir::BufferNode* buf : y.writes) {
          if (x.reads.count(buf) && std::pair(x.stage, x.order) > std::pair(y.stage, y.order)) {
            throw error("statement {} (stage {}, order {}) writes {}, which statement {} (stage {}, order {}) reads "
                        "before it in the same iteration, but would run after it",
                        b, y.stage, y.order, buf->name, a, x.stage, x.order);
          }
        }
      }
    }
    // Values carried from one iteration to the next live in buffers allocated outside the
    // loop: one stage must own them, or the overlap reorders their updates.
    std::map<const ir::BufferNode*, std::set<int64_t>> outside_stages;
    std::set<const ir::BufferNode*> written_outside;
    for (const PipelineStatement& s : statements_) {
      for (const auto* set : {&s.reads, &s.writes}) {
        for (const ir::BufferNode* b : *set) {
          if (!allocated_in_body(b)) outside_stages[b].insert(s.stage);
        }
      }
      for (const ir::BufferNode* b : s.writes) {
        if (!allocated_in_body(b)) written_outside.insert(b);
      }
    }
    for (const ir::BufferNode* b : written_outside) {
      if (outside_stages[b].size() > 1) {
        throw error("{} is allocated outside the loop and written in it, but statements of stages {} use it (carried "
                    "values must belong to one stage)",
                    b->name, fmt::join(outside_stages[b], ", "));
      }
    }
    for (const PipelineStatement& p : statements_) {
      if (!p.async) continue;
      for (const ir::BufferNode* b : p.writes) {
        if (!allocated_in_body(b)) {
          throw error("async stage {} writes {}, which is allocated outside the loop (only buffers of the loop body "
                      "can be waited for)",
                      p.stage, b->name);
        }
        for (const PipelineStatement& q : statements_) {
          if (&q == &p) continue;
          if (q.writes.count(b) && !q.async) {
            throw error("{} is written both by async stage {} and by stage {}, which is not async", b->name, p.stage,
                        q.stage);
          }
          if (q.reads.count(b) && q.stage <= p.stage) {
            throw error("statement of stage {} reads {}, which async stage {} writes: readers of an async copy must "
                        "be in a later stage",
                        q.stage, b->name, p.stage);
          }
        }
      }
    }
  }

  // Versions of a body buffer: one per iteration between its first write and last read.
  void plan_versions() {
    for (const ir::Buffer& b : allocated_) {
      int64_t lag = -1;
      for (const PipelineStatement& w : statements_) {
        if (!w.writes.count(b.get())) continue;
        for (const PipelineStatement& r : statements_) {
          if (r.reads.count(b.get())) lag = std::max(lag, r.stage - w.stage);
        }
      }
      int64_t versions = std::max<int64_t>(lag + 1, 1);
      if (versions == 1) continue;
      DRAGON_CHECK(b->shape.size() == 1, "inject_software_pipeline runs on flattened buffers ({})", b->name);
      int64_t elements = b->num_elements();
      if (gpu::is_shared_scope(b->scope)) {
        int64_t align = std::max<int64_t>(kSlotAlignmentBytes / b->dtype.bytes(), 1);
        elements = (elements + align - 1) / align * align;
      }
      Versioned v{ir::Buffer::make(b->name, b->dtype, {versions * elements}, b->scope), versions, elements};
      versioned_.emplace(b.get(), v);
    }
    for (const PipelineStatement& p : statements_) {
      if (!p.async) continue;
      has_async_ = true;
      for (const PipelineStatement& q : statements_) {
        for (const ir::BufferNode* b : p.writes) {
          if (q.reads.count(b)) {
            min_async_lag_ = std::min(min_async_lag_, q.stage - p.stage);
            async_readers_.insert(&q);
          }
        }
      }
    }
  }

  // Statements in program-step order.
  std::vector<const PipelineStatement*> by_order() const {
    std::vector<const PipelineStatement*> out;
    for (const PipelineStatement& s : statements_) out.push_back(&s);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->order < b->order; });
    return out;
  }

  // Time steps [begin, end) as one loop (nothing when empty): each statement that has
  // iterations in the range runs, guarded where only some steps have one.
  std::optional<ir::Stmt> phase(int64_t begin, int64_t end, const std::string& suffix) const {
    if (begin >= end) return std::nullopt;
    ir::DataType type = loop_->loop_var.dtype();
    ir::Var t(name_ + "_" + suffix, type);
    auto constant = [&](int64_t v) { return ir::make_const(type, static_cast<double>(v)); };
    std::vector<const PipelineStatement*> ordered = by_order();
    const PipelineStatement* last_async = nullptr;
    for (const PipelineStatement* s : ordered) {
      if (s->async) last_async = s;
    }
    std::vector<ir::Stmt> step;
    bool reads_async = false;
    for (const PipelineStatement* s : ordered) {
      // Statement s runs iteration t - stage at step t, for iterations in [0, extent).
      int64_t first = std::max(begin, s->stage);
      int64_t last = std::min(end, extent_ + s->stage);
      if (first < last) {
        ir::Expr relative = ir::Expr(t) - constant(s->stage);
        ir::Stmt at_iteration = ir::substitute(s->stmt, {{loop_->loop_var.get(), constant(min_) + relative}});
        ir::Stmt instance = StatementInstance(relative, versioned_).visit(at_iteration);
        if (s->async) instance = mark_async(instance, name_);
        ir::Expr guard;
        if (first > begin) guard = ir::Expr(t) >= constant(first);
        if (last < end) guard = guard.defined() ? (guard && ir::Expr(t) < constant(last)) : ir::Expr(t) < constant(last);
        step.push_back(guard.defined() ? ir::IfThenElseNode::make(guard, instance) : instance);
        reads_async = reads_async || async_readers_.count(s) > 0;
      }
      // One group per time step, even an empty one, so that the group a reader needs is
      // always the same number of groups back.
      if (s == last_async) step.push_back(gpu::async_commit_group());
    }
    if (reads_async) {
      // Groups up to step t - min_async_lag must have landed; step t's own group is not
      // committed yet. The barrier then shows every thread's copies to all, and tells each
      // writer of this step that every reader of the slot it overwrites is done.
      step.insert(step.begin(), {gpu::async_wait_group(min_async_lag_ - 1), gpu::sync_threads()});
    }
    ir::Annotations annotations = loop_->annotations;
    annotations.erase(std::string(kSoftwarePipelineStage));
    annotations.erase(std::string(kSoftwarePipelineOrder));
    annotations.erase(std::string(kSoftwarePipelineAsyncStages));
    return ir::ForNode::make(t, constant(begin), constant(end - begin), loop_->for_kind,
                             ir::SeqStmtNode::make(std::move(step)), {}, suffix == "steady" ? annotations : ir::Annotations{});
  }

  ir::Stmt assemble() const {
    std::vector<ir::Stmt> out;
    // The prologue's copies overwrite what an earlier run of this pipeline (an enclosing
    // loop's previous iteration) may still be reading; async writes are invisible to
    // insert_thread_syncs, so the barrier is ours to place.
    if (has_async_) out.push_back(gpu::sync_threads());
    int64_t steady_begin = std::min(max_stage_, extent_);
    int64_t steady_end = std::max(max_stage_, extent_);
    for (auto [begin, end, suffix] : {std::tuple{int64_t{0}, steady_begin, "prologue"},
                                     std::tuple{steady_begin, steady_end, "steady"},
                                     std::tuple{steady_end, extent_ + max_stage_, "epilogue"}}) {
      if (std::optional<ir::Stmt> p = phase(begin, end, suffix)) out.push_back(*p);
    }
    ir::Stmt result = ir::SeqStmtNode::make(std::move(out));
    for (auto it = allocated_.rbegin(); it != allocated_.rend(); ++it) {
      auto v = versioned_.find(it->get());
      result = ir::AllocateNode::make(v == versioned_.end() ? *it : v->second.buffer, result);
    }
    return result;
  }

  const ir::ForNode* loop_;
  ir::Stmt body_;
  std::string name_;
  std::vector<int64_t> stages_, orders_;
  std::set<int64_t> async_stages_;
  int64_t min_ = 0, extent_ = 0, max_stage_ = 0;
  std::vector<ir::Buffer> allocated_;
  std::vector<PipelineStatement> statements_;
  std::unordered_map<const ir::BufferNode*, Versioned> versioned_;
  bool has_async_ = false;
  int64_t min_async_lag_ = std::numeric_limits<int64_t>::max();
  std::set<const PipelineStatement*> async_readers_;
};

// Pipelines annotated loops, innermost first; refuses barriers where not every thread of
// the block would reach them.
class PipelineInjector : public ir::StmtExprMutator {
 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    bool thread_loop = op->for_kind == ir::ForKind::kThreadBinding && gpu::is_thread_tag(op->thread_tag);
    if (thread_loop) thread_vars_.insert(op->loop_var.get());
    ir::Stmt body = visit(op->body);
    if (thread_loop) thread_vars_.erase(op->loop_var.get());
    if (!op->annotations.count(kSoftwarePipelineStage)) {
      return body.same_as(op->body) ? ir::Stmt(op)
                                    : ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body,
                                                        op->thread_tag, op->annotations);
    }
    if (op->for_kind != ir::ForKind::kSerial && op->for_kind != ir::ForKind::kUnrolled) {
      throw UserError(fmt::format("software pipeline of loop '{}': the loop is {}, not serial", op->loop_var.name(),
                                  ir::for_kind_name(op->for_kind)));
    }
    if (divergent_ > 0) {
      throw UserError(fmt::format("software pipeline of loop '{}': the loop runs under a condition that depends on "
                                  "the thread, where its barriers would not be reached by every thread",
                                  op->loop_var.name()));
    }
    return Pipeline(op, body).build();
  }
  ir::Stmt visit_(const ir::IfThenElseNode* op) override {
    bool divergent = gpu::uses_var(op->condition, [&](const ir::VarNode* v) { return thread_vars_.count(v) > 0; });
    divergent_ += divergent;
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    divergent_ -= divergent;
    return s;
  }

 private:
  std::set<const ir::VarNode*> thread_vars_;
  int divergent_ = 0;
};

}  // namespace

ir::PrimFunc inject_software_pipeline(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "inject_software_pipeline runs on block-free IR (the kernel form)");
  ir::Stmt body = PipelineInjector().visit(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
