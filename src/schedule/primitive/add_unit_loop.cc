// add_unit_loop: a loop of extent 1 directly above a block or loop, giving later
// primitives (bind, compute_at, blockize) a loop to work on where there was none.
#include "dragon/ir/op.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

LoopRV Schedule::add_unit_loop(BlockOrLoop target) {
  constexpr InstructionKind kKind = InstructionKind::AddUnitLoop;
  const StmtNode* node;
  Arg target_arg;
  if (const auto* b = std::get_if<BlockRV>(&target)) {
    const BlockNode* block = resolve(*b, kKind, "block");
    // The loop goes around the realization (bindings stay outside the block).
    if (block->name == "root") {
      throw error(kKind, 1, "RootBlock", "block " + rv_name(*b), "the root block cannot be put in a loop",
                  ErrorLocus{nullptr, block->name});
    }
    auto path = detail::path_to(func_, block);
    DRAGON_CHECK(path.size() >= 2 && path[path.size() - 2]->kind == NodeKind::BlockRealize,
                 "block '{}' is not directly realized", block->name);
    node = path[path.size() - 2];
    target_arg = *b;
  } else {
    node = resolve(std::get<LoopRV>(target), kKind, "loop");
    target_arg = std::get<LoopRV>(target);
  }
  Var u("u", DataType::i32());
  Stmt loop = ForNode::make(u, make_zero(DataType::i32()), make_one(DataType::i32()), ForKind::kSerial, Stmt(node));
  LoopRV out = new_loop_rv(u);
  commit(detail::replace_in_func(func_, node, loop), Instruction{kKind, {target_arg}, {}, {out}});
  return out;
}

namespace detail {

std::vector<RandomVar> apply_add_unit_loop(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                           const std::optional<Arg>&) {
  expect_count(InstructionKind::AddUnitLoop, "inputs", inputs, 1);
  expect_count(InstructionKind::AddUnitLoop, "attrs", attrs, 0);
  return {sch.add_unit_loop(block_or_loop_arg(InstructionKind::AddUnitLoop, inputs[0]))};
}

}  // namespace detail
}  // namespace dragon::schedule
