// RewriteCooperativeFetch (rewrite_cooperative_fetch.h): the copy's loop split by the
// kernel's thread extents, bound and vectorized through the Schedule API. Reading the IR
// finds the kernel's extents; the Schedule checks every step. Also the postprocessor of
// that name.
#include "dragon/search/rewrite_cooperative_fetch.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "postproc/postproc.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::SplitFactor;

constexpr const char* kCooperativeFetch = "meta_schedule.cooperative_fetch";
constexpr int64_t kWarpSize = 32;

// Thread extents of one kernel, and whether it holds tensor-core (warp-level) blocks.
struct KernelThreads {
  std::optional<int64_t> x, y;
  bool has_warp_blocks = false;
};

KernelThreads scan_kernel(const ir::ForNode* kernel_root) {
  struct Scan : ir::StmtVisitor {
    KernelThreads threads;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (op->for_kind == ir::ForKind::kThreadBinding) {
        std::optional<int64_t> extent = ir::as_const_int(op->extent);
        if (op->thread_tag == "threadIdx.x" && extent) threads.x = std::max(threads.x.value_or(0), *extent);
        if (op->thread_tag == "threadIdx.y" && extent) threads.y = std::max(threads.y.value_or(0), *extent);
      }
      ir::StmtVisitor::visit_(op);
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      if (op->block->annotations.count("tensor_intrin") != 0) threads.has_warp_blocks = true;
      ir::StmtVisitor::visit_(op);
    }
  } scan;
  scan.visit(ir::Stmt(kernel_root));
  return scan.threads;
}

std::optional<int64_t> vector_length(const ir::BlockNode* block) {
  auto it = block->annotations.find(kCooperativeFetch);
  if (it == block->annotations.end()) return std::nullopt;
  const auto* v = std::get_if<int64_t>(&it->second);
  return v != nullptr && *v >= 1 ? std::optional<int64_t>(*v) : std::nullopt;
}

// Blocks in program order, by name (names stay valid across the rewrites).
std::vector<std::string> annotated_blocks(const ir::PrimFunc& func) {
  struct Collect : ir::StmtVisitor {
    std::vector<std::string> names;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::BlockRealizeNode* op) override {
      if (op->block->annotations.count(kCooperativeFetch) != 0) names.push_back(op->block->name);
      ir::StmtVisitor::visit_(op);
    }
  } collect;
  collect.visit(func->body);
  return collect.names;
}

bool rewrite_one(Schedule& sch, BlockRV copy) {
  std::optional<int64_t> vector = vector_length(sch.get(copy));
  std::vector<LoopRV> loops = sch.get_loops(copy);
  const ir::ForNode* kernel_root = nullptr;
  for (LoopRV loop : loops) {
    const ir::ForNode* f = sch.get(loop);
    if (f->for_kind == ir::ForKind::kThreadBinding && f->thread_tag.rfind("blockIdx.", 0) == 0) {
      kernel_root = f;
      break;
    }
  }
  if (!vector || kernel_root == nullptr || loops.empty()) return false;
  KernelThreads threads = scan_kernel(kernel_root);
  if (!threads.x && threads.has_warp_blocks) threads.x = kWarpSize;
  if (!threads.x && !threads.y) return false;
  // The copy's own innermost loop must be serial: a bound or vectorized one was rewritten
  // by hand already.
  LoopRV inner = loops.back();
  if (sch.get(inner)->for_kind != ir::ForKind::kSerial) return false;
  std::vector<SplitFactor> factors = {schedule::None{}};
  if (threads.y) factors.push_back(*threads.y);
  if (threads.x) factors.push_back(*threads.x);
  if (*vector > 1) factors.push_back(*vector);
  std::vector<LoopRV> parts = sch.split(inner, factors);
  size_t next = 1;
  if (threads.y) sch.bind(parts[next++], "threadIdx.y");
  if (threads.x) sch.bind(parts[next++], "threadIdx.x");
  if (*vector > 1) sch.vectorize(parts[next]);
  sch.unannotate(copy, kCooperativeFetch);
  return true;
}

}  // namespace

int rewrite_cooperative_fetch(Schedule& sch) {
  int rewritten = 0;
  for (const std::string& name : annotated_blocks(sch.func())) {
    if (rewrite_one(sch, sch.get_block(name))) ++rewritten;
  }
  return rewritten;
}

namespace {

class RewriteCooperativeFetchPostproc : public Postproc {
 public:
  std::optional<std::string> apply(Schedule& sch) const override {
    rewrite_cooperative_fetch(sch);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Postproc> make_rewrite_cooperative_fetch_postproc(ParamReader&, const lower::Target&) {
  return std::make_unique<RewriteCooperativeFetchPostproc>();
}

}  // namespace dragon::search
