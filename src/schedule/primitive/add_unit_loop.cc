// add_unit_loop: a loop of extent 1 directly above a block or loop, giving later
// primitives (bind, compute_at, blockize) a loop to work on where there was none.
#include "dragon/ir/op.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Adds a loop of extent 1 directly above the block or loop.
  // Requires:
  //   1) the block is not the root block (RootBlock).
  LoopRV add_unit_loop(BlockOrLoop target);
  CheckResult check_add_unit_loop(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<const ir::StmtNode*> plan_add_unit_loop(const BlockOrLoop& target) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

detail::Planned<const StmtNode*> Schedule::plan_add_unit_loop(const BlockOrLoop& target) const {
  constexpr InstructionKind kKind = InstructionKind::AddUnitLoop;
  if (const auto* b = std::get_if<BlockRV>(&target)) {
    auto block = find(*b, kKind, "block");
    if (!block.ok()) return std::move(block).take_error();
    // The loop goes around the realization (bindings stay outside the block).
    if ((*block)->name == "root") {
      return error(
          kKind, 1, "RootBlock", [&] { return "block " + rv_name(*b); }, "the root block cannot be put in a loop",
          ErrorLocus{nullptr, (*block)->name});
    }
    const BlockTree::BlockInfo* info = tree_->find(*block);
    DRAGON_CHECK(info->realize != nullptr, "block '{}' is not directly realized", (*block)->name);
    return static_cast<const StmtNode*>(info->realize);
  }
  auto loop = find(std::get<LoopRV>(target), kKind, "loop");
  if (!loop.ok()) return std::move(loop).take_error();
  return static_cast<const StmtNode*>(*loop);
}

LoopRV Schedule::add_unit_loop(BlockOrLoop target) {
  constexpr InstructionKind kKind = InstructionKind::AddUnitLoop;
  const StmtNode* node = plan_add_unit_loop(target).take();
  Var u("u", DataType::i32());
  Stmt loop = ForNode::make(u, make_zero(DataType::i32()), make_one(DataType::i32()), ForKind::kSerial, Stmt(node));
  LoopRV out = new_loop_rv(u);
  commit(detail::replace_in_func(func_, node, loop), detail::make_instruction(kKind, {out}, target));
  return out;
}

CheckResult Schedule::check_add_unit_loop(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto target = ops.block_or_loop(0);
  if (!target) return detail::unknown();
  return detail::verdict(plan_add_unit_loop(*target), true, 1);
}

namespace detail {

constexpr auto kAddUnitLoopSlots = numbered_slots({slot::input("block_or_loop", ValueType::kBlockOrLoop)});

constinit const InstructionSignature kAddUnitLoopSignature{
    .python_name = "add_unit_loop",
    .slots = kAddUnitLoopSlots,
    .outputs = OutputSignature::one(RVType::kLoop),
    .replay = replay_method<&Schedule::add_unit_loop>,
    .check = check_method<&Schedule::check_add_unit_loop>,
};

}  // namespace detail
}  // namespace dragon::schedule
