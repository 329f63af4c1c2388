// Loop kinds: parallel, vectorize, unroll and bind (to a GPU thread axis). They change
// how a loop runs, never which instances run, so the checks are about races: a loop run
// concurrently may only feed spatial iteration variables (threadIdx may feed reduce
// ones too: a cross-thread reduction).
#include <set>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Runs the loop in parallel (CPU threads) or as vector lanes.
  // Requires:
  //   1) every block below binds the loop only into spatial iteration variables
  //      (NotDataParallel).
  void parallel(LoopRV loop);
  void vectorize(LoopRV loop);
  // Unrolls the loop. No precondition.
  void unroll(LoopRV loop);
  // Binds the loop to a GPU thread axis.
  // Requires:
  //   1) the tag is one of blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z
  //      (InvalidThreadTag)
  //   2) every block below binds the loop only into spatial iteration variables, or
  //      also reduce ones for threadIdx.* (a cross-thread reduction) (NotDataParallel).
  void bind(LoopRV loop, std::string thread_axis);
  CheckResult check_loop_kind(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  // parallel, vectorize, unroll and bind (`kind`; bind's `thread_axis`).
  detail::Planned<const ir::ForNode*> plan_loop_kind(InstructionKind kind, LoopRV loop,
                                                     std::optional<std::string_view> thread_axis) const;
#endif

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

detail::Planned<const ForNode*> Schedule::plan_loop_kind(InstructionKind kind, LoopRV loop_rv,
                                                         std::optional<std::string_view> thread_axis) const {
  auto found = find(loop_rv, kind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  if (kind == InstructionKind::Unroll) return loop;  // no precondition
  int precondition = 1;
  bool allow_reduce = false;
  if (kind == InstructionKind::Bind) {
    if (!thread_axis) return loop;  // the tag is unknown: both preconditions read it
    static const std::set<std::string, std::less<>> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                             "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                                             "vthread.x",   "vthread.y",   "vthread.z"};
    if (!kTags.count(*thread_axis)) {
      return error(
          kind, 1, "InvalidThreadTag", [&] { return fmt::format("thread_axis \"{}\"", *thread_axis); },
          "not one of blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z", ErrorLocus{loop->loop_var.get(), {}});
    }
    precondition = 2;
    allow_reduce = thread_axis->starts_with("threadIdx.");
  }
  if (auto bad = find_unsafe_binding(loop, allow_reduce)) {
    return error(
        kind, precondition, "NotDataParallel", [&] { return fmt::format("loop {}", rv_name(loop_rv)); },
        [&] { return fmt::format("block '{}' binds it into {}", bad->first, bad->second); },
        ErrorLocus{loop->loop_var.get(), {}});
  }
  return loop;
}

void Schedule::parallel(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Parallel;
  const ForNode* loop = plan_loop_kind(kKind, loop_rv, std::nullopt).take();
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kParallel, loop->body, {}, loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), detail::make_instruction(kKind, {}, loop_rv));
}

void Schedule::vectorize(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Vectorize;
  const ForNode* loop = plan_loop_kind(kKind, loop_rv, std::nullopt).take();
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kVectorized, loop->body, {},
                         loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), detail::make_instruction(kKind, {}, loop_rv));
}

void Schedule::unroll(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::Unroll;
  const ForNode* loop = plan_loop_kind(kKind, loop_rv, std::nullopt).take();
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kUnrolled, loop->body, {}, loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), detail::make_instruction(kKind, {}, loop_rv));
}

void Schedule::bind(LoopRV loop_rv, std::string thread_axis) {
  constexpr InstructionKind kKind = InstructionKind::Bind;
  const ForNode* loop = plan_loop_kind(kKind, loop_rv, thread_axis).take();
  Stmt s = ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::kThreadBinding, loop->body, thread_axis,
                         loop->annotations);
  commit(detail::replace_in_func(func_, loop, s), detail::make_instruction(kKind, {}, loop_rv, thread_axis));
}

CheckResult Schedule::check_loop_kind(const detail::CheckedOperands& ops) const {
  const bool bind = ops.kind() == InstructionKind::Bind;
  ops.expect(1, bind ? 1 : 0);
  auto loop = ops.loop(0);
  std::optional<std::string_view> thread_axis = bind ? ops.string_attr(0) : std::nullopt;
  if (!loop) return detail::unknown();
  return detail::verdict(plan_loop_kind(ops.kind(), *loop, thread_axis), !bind || thread_axis.has_value(), 0);
}

namespace detail {

constexpr auto kLoopOnlySlots = numbered_slots({slot::input("loop", ValueType::kLoop)});

constinit const InstructionSignature kParallelSignature{
    .python_name = "parallel",
    .slots = kLoopOnlySlots,
    .replay = replay_method<&Schedule::parallel>,
    .check = check_method<&Schedule::check_loop_kind>,
};

constinit const InstructionSignature kVectorizeSignature{
    .python_name = "vectorize",
    .slots = kLoopOnlySlots,
    .replay = replay_method<&Schedule::vectorize>,
    .check = check_method<&Schedule::check_loop_kind>,
};

constinit const InstructionSignature kUnrollSignature{
    .python_name = "unroll",
    .slots = kLoopOnlySlots,
    .replay = replay_method<&Schedule::unroll>,
    .check = check_method<&Schedule::check_loop_kind>,
};

constexpr auto kBindSlots = numbered_slots({
    slot::input("loop", ValueType::kLoop),
    slot::attr("thread_axis", ValueType::kEnum).of(Vocabulary::kThreadAxis),
});

constinit const InstructionSignature kBindSignature{
    .python_name = "bind",
    .slots = kBindSlots,
    .replay = replay_method<&Schedule::bind>,
    .check = check_method<&Schedule::check_loop_kind>,
};

}  // namespace detail
}  // namespace dragon::schedule
