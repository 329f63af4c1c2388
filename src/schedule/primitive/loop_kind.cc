// Loop kinds: parallel, vectorize, unroll and bind (to a GPU thread axis). They change
// how a loop runs, never which instances run, so the checks are about races: a loop run
// concurrently may only feed spatial iteration variables (threadIdx may feed reduce
// ones too: a cross-thread reduction).
#include <set>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The first block below `loop` binding the loop into an iteration variable of a kind
// other than those allowed, with that variable's name; nullopt when there is none.
std::optional<std::pair<std::string, std::string>> find_unsafe_binding(const ForNode* loop, bool allow_reduce) {
  for (const BlockRealizeNode* r : detail::child_block_realizes(Stmt(loop))) {
    for (size_t k = 0; k < r->iter_values.size(); ++k) {
      const IterVar& iv = r->block->iter_vars[k];
      if (iv.kind == IterKind::kSpatial || (allow_reduce && iv.kind == IterKind::kReduce)) continue;
      if (detail::uses_any_var(r->iter_values[k], {loop->loop_var.get()})) {
        return std::make_pair(r->block->name, fmt::format("{} ({})", iv.var.name(), iter_kind_name(iv.kind)));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

void Schedule::parallel(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Parallel;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  if (auto bad = find_unsafe_binding(loop, false)) {
    throw error(kKind, 1, "NotDataParallel", fmt::format("loop {}", rv_name(loop_rv)),
                fmt::format("block '{}' binds it into {}", bad->first, bad->second), ErrorLocus{loop->loop_var.get(), {}});
  }
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kParallel, loop->body, {}, loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), Instruction{kKind, {loop_rv}, {}, {}});
}

void Schedule::vectorize(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Vectorize;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  if (auto bad = find_unsafe_binding(loop, false)) {
    throw error(kKind, 1, "NotDataParallel", fmt::format("loop {}", rv_name(loop_rv)),
                fmt::format("block '{}' binds it into {}", bad->first, bad->second), ErrorLocus{loop->loop_var.get(), {}});
  }
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kVectorized, loop->body, {},
                         loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), Instruction{kKind, {loop_rv}, {}, {}});
}

void Schedule::unroll(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Unroll;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kUnrolled, loop->body, {}, loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), Instruction{kKind, {loop_rv}, {}, {}});
}

void Schedule::bind(LoopRV loop_rv, std::string thread_axis) {
  constexpr InstructionKind kKind = InstructionKind::Bind;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  static const std::set<std::string, std::less<>> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                           "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                                           "vthread.x",   "vthread.y",   "vthread.z"};
  if (!kTags.count(thread_axis)) {
    throw error(kKind, 1, "InvalidThreadTag", fmt::format("thread_axis \"{}\"", thread_axis),
                "not one of blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z", ErrorLocus{loop->loop_var.get(), {}});
  }
  bool allow_reduce = thread_axis.starts_with("threadIdx.");
  if (auto bad = find_unsafe_binding(loop, allow_reduce)) {
    throw error(kKind, 2, "NotDataParallel", fmt::format("loop {}", rv_name(loop_rv)),
                fmt::format("block '{}' binds it into {}", bad->first, bad->second), ErrorLocus{loop->loop_var.get(), {}});
  }
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kThreadBinding, loop->body, thread_axis,
                         loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), Instruction{kKind, {loop_rv}, {thread_axis}, {}});
}

namespace detail {

std::vector<RandomVar> apply_parallel(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                      const std::optional<Arg>&) {
  expect_count(InstructionKind::Parallel, "inputs", inputs, 1);
  expect_count(InstructionKind::Parallel, "attrs", attrs, 0);
  sch.parallel(loop_arg(InstructionKind::Parallel, inputs[0]));
  return {};
}

std::vector<RandomVar> apply_vectorize(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                       const std::optional<Arg>&) {
  expect_count(InstructionKind::Vectorize, "inputs", inputs, 1);
  expect_count(InstructionKind::Vectorize, "attrs", attrs, 0);
  sch.vectorize(loop_arg(InstructionKind::Vectorize, inputs[0]));
  return {};
}

std::vector<RandomVar> apply_unroll(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                    const std::optional<Arg>&) {
  expect_count(InstructionKind::Unroll, "inputs", inputs, 1);
  expect_count(InstructionKind::Unroll, "attrs", attrs, 0);
  sch.unroll(loop_arg(InstructionKind::Unroll, inputs[0]));
  return {};
}

std::vector<RandomVar> apply_bind(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                  const std::optional<Arg>&) {
  expect_count(InstructionKind::Bind, "inputs", inputs, 1);
  expect_count(InstructionKind::Bind, "attrs", attrs, 1);
  sch.bind(loop_arg(InstructionKind::Bind, inputs[0]), string_arg(InstructionKind::Bind, attrs[0]));
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
