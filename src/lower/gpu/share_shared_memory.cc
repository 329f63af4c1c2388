// share_shared_memory (passes.h): the shared buffers of a kernel whose lifetimes do not
// overlap become one buffer, so the kernel needs the largest of them rather than their
// sum (a GEMM's operand tiles, used only in the k loop, and its output staging tile,
// used only after it). Lifetimes are ranges of the kernel body's top-level statements;
// not a reuse of memory within a statement, nor between buffers of different types.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

bool is_wgmma_block(const ir::ForNode* loop) {
  auto it = loop->annotations.find("tensor_intrin");
  if (it == loop->annotations.end()) return false;
  const auto* name = std::get_if<std::string>(&it->second);
  return name != nullptr && name->rfind("wgmma_", 0) == 0;
}

// Every way a statement refers to buffers. In the flat form a buffer appears only as the
// target of a load, a store or an allocation: calls (tensor-core blocks stay loops of
// loads and stores until the emitter; barriers and cp.async groups take constants) and
// annotations name none. Blocks, gone by now, are counted in case one is left.
class BufferReferences : public ir::StmtExprVisitor {
 public:
  std::unordered_map<const ir::BufferNode*, int> count;
  // Written under a loop annotated async_copy: the stores land later, at a wait.
  std::unordered_set<const ir::BufferNode*> async_written;
  // Read by a wgmma block: the emitter lays such a buffer out with the hardware's 128-byte
  // swizzle from a 1024-byte aligned start (CudaEmitter::swizzled_), which another
  // member's accesses (tensor-core stores through a plain pointer) would not follow.
  std::unordered_set<const ir::BufferNode*> wgmma_operand;
  std::set<std::string> names;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    const bool async = op->annotations.count(kAsyncCopyAnnotation) > 0;
    const bool wgmma = is_wgmma_block(op);
    async_depth_ += async;
    wgmma_depth_ += wgmma;
    ir::StmtExprVisitor::visit_(op);
    async_depth_ -= async;
    wgmma_depth_ -= wgmma;
  }
  void visit_(const ir::BufferLoadNode* op) override {
    note(op->buffer.get());
    if (wgmma_depth_ > 0) wgmma_operand.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    note(op->buffer.get());
    if (async_depth_ > 0) async_written.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::AllocateNode* op) override {
    note(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BlockNode* op) override {
    for (const auto* regions : {&op->reads, &op->writes}) {
      for (const ir::BufferRegion& r : *regions) note(r.buffer.get());
    }
    for (const ir::Buffer& b : op->alloc_buffers) note(b.get());
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  void note(const ir::BufferNode* buffer) {
    ++count[buffer];
    names.insert(buffer->name);
  }
  int async_depth_ = 0;
  int wgmma_depth_ = 0;
};

// A shared buffer that may share memory: the top-level statements that use it.
struct SharingCandidate {
  ir::Buffer buffer;
  size_t first = 0, last = 0;  // positions in the body's statement sequence
  bool async_written = false;
};

// Buffers that take turns in one piece of memory, in order of use.
struct SharedSlot {
  std::vector<const SharingCandidate*> members;
  int64_t elements = 0;
};

// Points the loads and stores of merged buffers at the buffer that holds them.
class AccessRedirector : public ir::StmtExprMutator {
 public:
  explicit AccessRedirector(const std::unordered_map<const ir::BufferNode*, ir::Buffer>& target) : target_(target) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    auto it = target_.find(op->buffer.get());
    if (it == target_.end()) return e;
    return ir::BufferLoadNode::make(it->second, e.as<ir::BufferLoadNode>()->indices);
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = target_.find(op->buffer.get());
    if (it == target_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    return ir::BufferStoreNode::make(it->second, store->value, store->indices);
  }

 private:
  const std::unordered_map<const ir::BufferNode*, ir::Buffer>& target_;
};

class SharedMemorySharer {
 public:
  explicit SharedMemorySharer(const ir::PrimFunc& func) {
    for (const ir::Param& p : func->params) global_names_.insert(p.buffer->name);
  }

  ir::Stmt rewrite(const ir::Stmt& s) {
    return gpu::rewrite_each_kernel(s, global_names_, [&](const ir::Stmt& kernel) { return share(kernel); });
  }

 private:
  // One kernel: launch loops, then its allocations (plan_gpu_allocations put them there),
  // then the body whose top-level statements give the lifetimes.
  ir::Stmt share(const ir::Stmt& kernel) {
    const gpu::LaunchNest launch = gpu::peel_launch_nest(kernel);
    ir::Stmt body = launch.body;
    std::vector<ir::Buffer> allocs;
    while (const auto* alloc = body.as<ir::AllocateNode>()) {
      allocs.push_back(alloc->buffer);
      body = alloc->body;
    }
    const auto* seq = body.as<ir::SeqStmtNode>();
    if (seq == nullptr) return kernel;  // one statement: every buffer lives through all of it
    const std::vector<ir::Stmt>& stmts = seq->seq;

    std::vector<SharingCandidate> candidates = find_candidates(kernel, allocs, stmts);
    std::vector<SharedSlot> slots = assign_slots(candidates);

    // Each slot of several members becomes one buffer, named after what it holds in turn.
    BufferReferences everything;
    everything.visit(kernel);
    std::set<std::string> taken = everything.names;
    taken.insert(global_names_.begin(), global_names_.end());
    std::unordered_map<const ir::BufferNode*, ir::Buffer> merged;
    // Before these statements: wait for a previous member's async copies and fence them
    // off from the next member's writes (see below).
    std::set<size_t> drain_before;
    for (const SharedSlot& slot : slots) {
      if (slot.members.size() < 2) continue;
      std::string name;
      for (const SharingCandidate* m : slot.members) name += (name.empty() ? "" : "_then_") + m->buffer->name;
      std::string unique = name;
      for (int suffix = 1; taken.count(unique); ++suffix) unique = fmt::format("{}_{}", name, suffix);
      taken.insert(unique);
      const ir::Buffer& first = slot.members.front()->buffer;
      ir::Buffer shared = ir::Buffer::make(unique, first->dtype, {slot.elements}, first->scope);
      for (size_t i = 0; i < slot.members.size(); ++i) {
        merged.emplace(slot.members[i]->buffer.get(), shared);
        // A member's async copies land whenever their group is waited for, which need not
        // be before its last statement (a copy nobody reads is never waited for); landing
        // after the next member wrote would clobber it. insert_thread_syncs does not count
        // async stores as writes (their pipeline orders them), so the barrier that makes
        // every thread's copies land before any thread writes the next member goes here.
        if (i > 0 && slot.members[i - 1]->async_written) drain_before.insert(slot.members[i]->first);
      }
    }
    if (merged.empty()) return kernel;

    AccessRedirector redirect(merged);
    std::vector<ir::Stmt> new_stmts;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (drain_before.count(i)) {
        new_stmts.push_back(gpu::async_wait_group(0));
        new_stmts.push_back(gpu::sync_threads());
      }
      new_stmts.push_back(redirect.visit(stmts[i]));
    }
    ir::Stmt out = ir::SeqStmtNode::make(std::move(new_stmts));
    // The merged buffer is allocated where its first-allocated member was (the emitter
    // gives shared buffers offsets in allocation order); the other members' allocations go.
    std::vector<ir::Buffer> new_allocs;
    std::unordered_set<const ir::BufferNode*> placed;
    for (const ir::Buffer& b : allocs) {
      auto m = merged.find(b.get());
      if (m == merged.end()) {
        new_allocs.push_back(b);
      } else if (placed.insert(m->second.get()).second) {
        new_allocs.push_back(m->second);
      }
    }
    for (auto it = new_allocs.rbegin(); it != new_allocs.rend(); ++it) out = ir::AllocateNode::make(*it, out);
    return launch.with_launch(out);
  }

  // The kernel-top shared buffers whose every reference lies in some top-level statement,
  // with the first and last of those statements.
  static std::vector<SharingCandidate> find_candidates(const ir::Stmt& kernel, const std::vector<ir::Buffer>& allocs,
                                                       const std::vector<ir::Stmt>& stmts) {
    std::vector<SharingCandidate> candidates;
    std::unordered_map<const ir::BufferNode*, size_t> index;
    for (const ir::Buffer& b : allocs) {
      // Flattened buffers are 1-D; anything else is left as it is.
      if (!gpu::is_shared_scope(b->scope) || b.ndim() != 1) continue;
      index.emplace(b.get(), candidates.size());
      candidates.push_back({b});
    }
    if (candidates.size() < 2) return {};
    std::vector<bool> used(candidates.size(), false), excluded(candidates.size(), false);
    std::unordered_map<const ir::BufferNode*, int> attributed;
    for (size_t pos = 0; pos < stmts.size(); ++pos) {
      BufferReferences refs;
      refs.visit(stmts[pos]);
      for (const auto& [buffer, n] : refs.count) {
        auto it = index.find(buffer);
        if (it == index.end()) continue;
        SharingCandidate& c = candidates[it->second];
        attributed[buffer] += n;
        if (!used[it->second]) c.first = pos;
        used[it->second] = true;
        c.last = pos;
        c.async_written = c.async_written || refs.async_written.count(buffer) > 0;
        if (refs.wgmma_operand.count(buffer)) excluded[it->second] = true;
      }
    }
    // A reference outside the statements (in a launch loop's bounds, a second allocation
    // of the same buffer) has no place in the sequence: such a buffer keeps its memory.
    BufferReferences whole;
    whole.visit(kernel);
    std::vector<SharingCandidate> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const ir::BufferNode* b = candidates[i].buffer.get();
      if (!used[i] || excluded[i] || whole.count[b] != attributed[b] + 1) continue;
      out.push_back(candidates[i]);
    }
    return out;
  }

  // Greedy interval colouring in order of first use: each buffer joins the slot of its
  // type and scope whose members all died before it starts, the one it grows least (and
  // then the smallest), or opens a slot. A buffer written by async copies only opens
  // slots: insert_thread_syncs does not see those stores as writes, so nothing would
  // keep them from overwriting a previous member other threads still read.
  static std::vector<SharedSlot> assign_slots(std::vector<SharingCandidate>& candidates) {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const SharingCandidate& a, const SharingCandidate& b) { return a.first < b.first; });
    std::vector<SharedSlot> slots;
    for (const SharingCandidate& c : candidates) {
      const int64_t elements = c.buffer->shape[0];
      SharedSlot* best = nullptr;
      auto growth = [&](const SharedSlot& s) { return std::max<int64_t>(0, elements - s.elements); };
      if (!c.async_written) {
        for (SharedSlot& s : slots) {
          const SharingCandidate* tail = s.members.back();
          if (tail->buffer->dtype != c.buffer->dtype || tail->buffer->scope != c.buffer->scope) continue;
          if (tail->last >= c.first) continue;
          if (best == nullptr || growth(s) < growth(*best) ||
              (growth(s) == growth(*best) && s.elements < best->elements)) {
            best = &s;
          }
        }
      }
      if (best == nullptr) best = &slots.emplace_back();
      best->members.push_back(&c);
      best->elements = std::max(best->elements, elements);
    }
    return slots;
  }

  std::set<std::string> global_names_;
};

}  // namespace

ir::PrimFunc share_shared_memory(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "share_shared_memory runs on block-free IR (after lower_blocks)");
  ir::Stmt body = SharedMemorySharer(func).rewrite(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
