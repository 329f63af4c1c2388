// The delayed-landing model of cp.async (async_copy_model.h): per target buffer D a
// per-thread queue of `queue_groups` slots of D's size (values and, per element, the
// group + 1 that wrote it, 0 when empty), a per-thread count of committed groups and of
// landed groups; waits land the groups they retire, oldest first.
#include "async_copy_model.h"

#include <map>
#include <set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"

namespace dragon::lower::testing {
namespace {

using ir::DataType;

ir::Expr i32(int64_t v) { return ir::make_const(DataType::i32(), static_cast<double>(v)); }

struct Queue {
  ir::Buffer values;  // [queue_groups * |D|]
  ir::Buffer tags;    // i32, same size: group + 1 of the pending value, 0 when empty
};

class AsyncTargets : public ir::StmtVisitor {
 public:
  std::vector<ir::Buffer> buffers;

 protected:
  using ir::StmtVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    bool async = op->annotations.count(kAsyncCopyAnnotation) > 0;
    depth_ += async;
    ir::StmtVisitor::visit_(op);
    depth_ -= async;
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (depth_ == 0) return;
    for (const ir::Buffer& b : buffers) {
      if (b.same_as(op->buffer)) return;
    }
    buffers.push_back(op->buffer);
  }

 private:
  int depth_ = 0;
};

class Delayer : public ir::StmtExprMutator {
 public:
  Delayer(std::map<const ir::BufferNode*, Queue> queues, ir::Buffer committed, ir::Buffer landed, int64_t slots)
      : queues_(std::move(queues)), committed_(std::move(committed)), landed_(std::move(landed)), slots_(slots) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    bool async = op->annotations.count(kAsyncCopyAnnotation) > 0;
    depth_ += async;
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    depth_ -= async;
    return s;
  }

  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = queues_.find(op->buffer.get());
    if (depth_ == 0 || it == queues_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    ir::Expr group = count(committed_);
    ir::Expr at = ir::floormod(group, i32(slots_)) * i32(size(op->buffer)) + ir::cast(DataType::i32(), store->indices[0]);
    return ir::SeqStmtNode::make({ir::BufferStoreNode::make(it->second.values, store->value, {at}),
                                  ir::BufferStoreNode::make(it->second.tags, group + i32(1), {at})});
  }

  ir::Stmt visit_(const ir::EvaluateNode* op) override {
    const auto* call = op->value.as<ir::CallNode>();
    if (call == nullptr) return ir::StmtExprMutator::visit_(op);
    if (call->op == ir::Intrinsic::AsyncCommitGroup) {
      return ir::BufferStoreNode::make(committed_, count(committed_) + i32(1), {i32(0)});
    }
    if (call->op == ir::Intrinsic::AsyncWaitGroup) return land(*ir::as_const_int(call->args[0]));
    return ir::StmtExprMutator::visit_(op);
  }

 private:
  static int64_t size(const ir::Buffer& b) { return b->num_elements(); }
  static ir::Expr count(const ir::Buffer& counter) { return ir::BufferLoadNode::make(counter, {i32(0)}); }

  // Lands every pending group g < committed - in_flight, oldest first.
  ir::Stmt land(int64_t in_flight) {
    ir::Expr retire_below = count(committed_) - i32(in_flight);
    std::vector<ir::Stmt> per_buffer;
    ir::Var k("landing_group", DataType::i32());
    ir::Expr group = count(landed_) + k;
    for (const auto& [target, queue] : queues_) {
      ir::Buffer dst(target);
      ir::Var e("landing_element", DataType::i32());
      ir::Expr at = ir::floormod(group, i32(slots_)) * i32(size(dst)) + e;
      ir::Expr tag = ir::BufferLoadNode::make(queue.tags, {at});
      ir::Stmt move = ir::SeqStmtNode::make({
          ir::BufferStoreNode::make(dst, ir::BufferLoadNode::make(queue.values, {at}), {e}),
          ir::BufferStoreNode::make(queue.tags, i32(0), {at}),
      });
      per_buffer.push_back(ir::ForNode::make(e, i32(0), i32(size(dst)), ir::ForKind::kSerial,
                                             ir::IfThenElseNode::make(ir::eq(tag, group + i32(1)), move)));
    }
    ir::Stmt groups = ir::ForNode::make(
        k, i32(0), i32(slots_), ir::ForKind::kSerial,
        ir::IfThenElseNode::make(group < retire_below, ir::SeqStmtNode::make(std::move(per_buffer))));
    ir::Stmt advance = ir::IfThenElseNode::make(count(landed_) < retire_below,
                                                ir::BufferStoreNode::make(landed_, retire_below, {i32(0)}));
    return ir::SeqStmtNode::make({groups, advance});
  }

  std::map<const ir::BufferNode*, Queue> queues_;
  ir::Buffer committed_, landed_;
  int64_t slots_;
  int depth_ = 0;
};

ir::Stmt zero_fill(const ir::Buffer& b) {
  ir::Var i("init_" + b->name, DataType::i32());
  return ir::ForNode::make(i, i32(0), i32(b->num_elements()), ir::ForKind::kSerial,
                           ir::BufferStoreNode::make(b, ir::make_zero(b->dtype), {i}));
}

ir::Stmt delay_kernel(const ir::Stmt& kernel, int64_t slots) {
  std::vector<const ir::ForNode*> launch;
  ir::Stmt body = kernel;
  while (const auto* loop = body.as<ir::ForNode>()) {
    if (loop->for_kind != ir::ForKind::kThreadBinding) break;
    launch.push_back(loop);
    body = loop->body;
  }
  std::vector<ir::Buffer> allocs;
  while (const auto* alloc = body.as<ir::AllocateNode>()) {
    allocs.push_back(alloc->buffer);
    body = alloc->body;
  }
  AsyncTargets targets;
  targets.visit(body);
  if (targets.buffers.empty()) return kernel;
  std::map<const ir::BufferNode*, Queue> queues;
  ir::Buffer committed = ir::Buffer::make("async_committed", DataType::i32(), {1}, "local");
  ir::Buffer landed = ir::Buffer::make("async_landed", DataType::i32(), {1}, "local");
  std::vector<ir::Stmt> init = {zero_fill(committed), zero_fill(landed)};
  allocs.push_back(committed);
  allocs.push_back(landed);
  for (const ir::Buffer& b : targets.buffers) {
    Queue q{ir::Buffer::make(b->name + "_pending", b->dtype, {slots * b->num_elements()}, "local"),
            ir::Buffer::make(b->name + "_pending_group", DataType::i32(), {slots * b->num_elements()}, "local")};
    allocs.push_back(q.values);
    allocs.push_back(q.tags);
    init.push_back(zero_fill(q.tags));
    queues.emplace(b.get(), q);
  }
  init.push_back(Delayer(std::move(queues), committed, landed, slots).visit(body));
  ir::Stmt out = ir::SeqStmtNode::make(std::move(init));
  for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) out = ir::AllocateNode::make(*it, out);
  for (auto it = launch.rbegin(); it != launch.rend(); ++it) {
    const ir::ForNode* l = *it;
    out = ir::ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, out, l->thread_tag, l->annotations);
  }
  return out;
}

ir::Stmt delay_top(const ir::Stmt& s, int64_t slots) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    std::vector<ir::Stmt> out;
    for (const ir::Stmt& child : seq->seq) out.push_back(delay_top(child, slots));
    return ir::SeqStmtNode::make(std::move(out));
  }
  if (const auto* alloc = s.as<ir::AllocateNode>(); alloc != nullptr && alloc->buffer->scope == "global") {
    return ir::AllocateNode::make(alloc->buffer, delay_top(alloc->body, slots));
  }
  if (const auto* loop = s.as<ir::ForNode>(); loop != nullptr && loop->for_kind == ir::ForKind::kThreadBinding) {
    return delay_kernel(s, slots);
  }
  return s;
}

}  // namespace

ir::PrimFunc delay_async_copies(const ir::PrimFunc& func, int64_t queue_groups) {
  return func.with_body(delay_top(func->body, queue_groups));
}

}  // namespace dragon::lower::testing
