// Lookup primitives (pure): get_block, get_loops, get_child_blocks, get_producers,
// get_consumers, get_output_blocks. They read the IR and record an instruction; they never
// change the IR.
#include <algorithm>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // The block named `name`.
  // Requires:
  //   1) a block of that name exists (BlockNotFound).
  BlockRV get_block(std::string_view name);
  // The loops above `block`, outermost first, up to the enclosing block.
  std::vector<LoopRV> get_loops(BlockRV block);
  // The blocks directly under `parent` (not nested in another block), in program order.
  std::vector<BlockRV> get_child_blocks(BlockOrLoop parent);
  // Blocks of the same scope that run before `block` and write a buffer it reads.
  std::vector<BlockRV> get_producers(BlockRV block);
  // Blocks of the same scope that run after `block` and read a buffer it writes.
  std::vector<BlockRV> get_consumers(BlockRV block);
  // The blocks under `scope_block` (at any depth, not itself), in program order, that write
  // a buffer their own scope block does not allocate: under the root, the blocks writing a
  // function output (TVM's GetOutputBlocks). Rules find the stage to tile, bind or keep
  // from inlining without naming it. No precondition beyond the block resolving.
  std::vector<BlockRV> get_output_blocks(BlockRV scope_block);
  CheckResult check_get_block(const detail::CheckedOperands& ops) const;
  CheckResult check_get_loops(const detail::CheckedOperands& ops) const;
  CheckResult check_get_child_blocks(const detail::CheckedOperands& ops) const;
  CheckResult check_get_producers(const detail::CheckedOperands& ops) const;
  CheckResult check_get_consumers(const detail::CheckedOperands& ops) const;
  CheckResult check_get_output_blocks(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<const ir::BlockNode*> plan_get_block(std::string_view name) const;
  detail::Planned<std::vector<const ir::ForNode*>> plan_get_loops(BlockRV block) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_child_blocks(const BlockOrLoop& parent) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_producers(BlockRV block) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_consumers(BlockRV block) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_output_blocks(BlockRV scope_block) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

detail::Planned<const BlockNode*> Schedule::plan_get_block(std::string_view name) const {
  const BlockTree::BlockInfo* info = tree_->named(name);
  if (info == nullptr || info->realize == nullptr) {
    return error(
        InstructionKind::GetBlock, 1, "BlockNotFound", [&] { return fmt::format("name \"{}\"", name); },
        [&] { return fmt::format("no block is named '{}'", name); });
  }
  return info->block;
}

BlockRV Schedule::get_block(std::string_view name) {
  plan_get_block(name).take();
  BlockRV rv = new_block_rv(std::string(name));
  // func_name is always "main", as in TVM's single-function modules: a trace applies to
  // any function with the same structure, whatever the function is called.
  record(detail::make_instruction(InstructionKind::GetBlock, {rv}, name, std::string_view("main")));
  return rv;
}

detail::Planned<std::vector<const ForNode*>> Schedule::plan_get_loops(BlockRV block) const {
  auto b = find(block, InstructionKind::GetLoops, "block");
  if (!b.ok()) return std::move(b).take_error();
  std::span<const ForNode* const> loops = tree_->find(*b)->scope_loops();
  return std::vector<const ForNode*>(loops.begin(), loops.end());
}

std::vector<LoopRV> Schedule::get_loops(BlockRV block) {
  std::vector<LoopRV> loops;
  for (const ForNode* loop : plan_get_loops(block).take()) loops.push_back(new_loop_rv(loop->loop_var));
  record(detail::make_instruction(InstructionKind::GetLoops, detail::as_outputs(loops), block));
  return loops;
}

detail::Planned<std::vector<const BlockNode*>> Schedule::plan_get_child_blocks(const BlockOrLoop& parent) const {
  Stmt root;
  if (const auto* b = std::get_if<BlockRV>(&parent)) {
    auto block = find(*b, InstructionKind::GetChildBlocks, "block");
    if (!block.ok()) return std::move(block).take_error();
    root = Stmt(*block);
  } else {
    auto loop = find(std::get<LoopRV>(parent), InstructionKind::GetChildBlocks, "loop");
    if (!loop.ok()) return std::move(loop).take_error();
    root = Stmt(*loop);
  }
  std::vector<const BlockNode*> blocks;
  for (const BlockRealizeNode* r : detail::child_block_realizes(root)) blocks.push_back(r->block.get());
  return blocks;
}

std::vector<BlockRV> Schedule::get_child_blocks(BlockOrLoop parent) {
  std::vector<BlockRV> blocks;
  for (const BlockNode* b : plan_get_child_blocks(parent).take()) blocks.push_back(new_block_rv(b->name));
  record(detail::make_instruction(InstructionKind::GetChildBlocks, detail::as_outputs(blocks), parent));
  return blocks;
}

namespace {

bool touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(), [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

bool writes_what_reads(const BlockNode* writer, const BlockNode* reader) {
  return std::any_of(writer->writes.begin(), writer->writes.end(),
                     [&](const BufferRegion& w) { return touches(reader->reads, w.buffer.get()); });
}

// The blocks of `block`'s scope that run before it (`before`) or after it and write what
// it reads (producers) or read what it writes (consumers), in program order.
std::vector<const BlockNode*> related_siblings(const BlockTree& tree, const BlockNode* block, bool producers) {
  std::vector<const BlockNode*> out;
  const BlockNode* scope = tree.find(block)->scope;
  if (scope == nullptr) return out;
  bool after = false;
  for (const BlockTree::BlockInfo& sibling : tree.blocks()) {
    if (sibling.scope != scope) continue;
    if (sibling.block == block) {
      after = true;
      continue;
    }
    if (producers && !after && writes_what_reads(sibling.block, block)) out.push_back(sibling.block);
    if (!producers && after && writes_what_reads(block, sibling.block)) out.push_back(sibling.block);
  }
  return out;
}

}  // namespace

detail::Planned<std::vector<const BlockNode*>> Schedule::plan_get_producers(BlockRV block) const {
  auto b = find(block, InstructionKind::GetProducers, "block");
  if (!b.ok()) return std::move(b).take_error();
  return related_siblings(*tree_, *b, true);
}

detail::Planned<std::vector<const BlockNode*>> Schedule::plan_get_consumers(BlockRV block) const {
  auto b = find(block, InstructionKind::GetConsumers, "block");
  if (!b.ok()) return std::move(b).take_error();
  return related_siblings(*tree_, *b, false);
}

std::vector<BlockRV> Schedule::get_producers(BlockRV block) {
  std::vector<BlockRV> result;
  for (const BlockNode* b : plan_get_producers(block).take()) result.push_back(new_block_rv(b->name));
  record(detail::make_instruction(InstructionKind::GetProducers, detail::as_outputs(result), block));
  return result;
}

std::vector<BlockRV> Schedule::get_consumers(BlockRV block) {
  std::vector<BlockRV> result;
  for (const BlockNode* b : plan_get_consumers(block).take()) result.push_back(new_block_rv(b->name));
  record(detail::make_instruction(InstructionKind::GetConsumers, detail::as_outputs(result), block));
  return result;
}

detail::Planned<std::vector<const BlockNode*>> Schedule::plan_get_output_blocks(BlockRV scope_block) const {
  auto scope = find(scope_block, InstructionKind::GetOutputBlocks, "scope_block");
  if (!scope.ok()) return std::move(scope).take_error();
  std::vector<const BlockNode*> outputs;
  for (const BlockTree::BlockInfo& info : tree_->blocks()) {
    if (!tree_->encloses(*scope, info.block)) continue;
    const std::vector<Buffer>& allocated = info.scope->alloc_buffers;
    const bool writes_outside = std::any_of(info.block->writes.begin(), info.block->writes.end(), [&](const BufferRegion& w) {
      return std::none_of(allocated.begin(), allocated.end(), [&](const Buffer& b) { return b.same_as(w.buffer); });
    });
    if (writes_outside) outputs.push_back(info.block);
  }
  return outputs;
}

std::vector<BlockRV> Schedule::get_output_blocks(BlockRV scope_block) {
  std::vector<BlockRV> result;
  for (const BlockNode* b : plan_get_output_blocks(scope_block).take()) result.push_back(new_block_rv(b->name));
  record(detail::make_instruction(InstructionKind::GetOutputBlocks, detail::as_outputs(result), scope_block));
  return result;
}

CheckResult Schedule::check_get_block(const detail::CheckedOperands& ops) const {
  ops.expect(0, 2);
  ops.string_attr(1);  // func_name: read by replay, not by the lookup
  auto name = ops.string_attr(0);
  if (!name) return detail::unknown();
  return detail::verdict(plan_get_block(*name), true, 1);
}

CheckResult Schedule::check_get_loops(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  auto loops = plan_get_loops(*block);
  const size_t n = loops.ok() ? loops->size() : 0;
  return detail::verdict(std::move(loops), true, n);
}

CheckResult Schedule::check_get_child_blocks(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto parent = ops.block_or_loop(0);
  if (!parent) return detail::unknown();
  auto blocks = plan_get_child_blocks(*parent);
  const size_t n = blocks.ok() ? blocks->size() : 0;
  return detail::verdict(std::move(blocks), true, n);
}

CheckResult Schedule::check_get_producers(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  auto blocks = plan_get_producers(*block);
  const size_t n = blocks.ok() ? blocks->size() : 0;
  return detail::verdict(std::move(blocks), true, n);
}

CheckResult Schedule::check_get_consumers(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  auto blocks = plan_get_consumers(*block);
  const size_t n = blocks.ok() ? blocks->size() : 0;
  return detail::verdict(std::move(blocks), true, n);
}

CheckResult Schedule::check_get_output_blocks(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto scope_block = ops.block(0);
  if (!scope_block) return detail::unknown();
  auto blocks = plan_get_output_blocks(*scope_block);
  const size_t n = blocks.ok() ? blocks->size() : 0;
  return detail::verdict(std::move(blocks), true, n);
}

namespace detail {

constexpr auto kGetBlockSlots = numbered_slots({
    slot::attr("name", ValueType::kString),
    slot::attr("func_name", ValueType::kString).defaults_to(std::string_view("main")),
});

// func_name is not read: a trace applies to a function of any name.
std::vector<RandomVar> replay_get_block(Schedule& sch, const Operands& operands) {
  auto [name, func_name] = operands.unpack<std::string_view, Arg>();
  return {sch.get_block(name)};
}

constinit const InstructionSignature kGetBlockSignature{
    .python_name = "get_block",
    .is_pure = true,
    .slots = kGetBlockSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_get_block,
    .check = check_method<&Schedule::check_get_block>,
};

// The lookups whose number of outputs the IR decides write it: decoding needs no IR.
constexpr auto kBlockAndCountSlots = numbered_slots({slot::input("block", ValueType::kBlock), slot::output_count()});

constinit const InstructionSignature kGetLoopsSignature{
    .python_name = "get_loops",
    .is_pure = true,
    .slots = kBlockAndCountSlots,
    .outputs = OutputSignature::written(1, RVType::kLoop),
    .replay = replay_method<&Schedule::get_loops>,
    .check = check_method<&Schedule::check_get_loops>,
};

constexpr auto kGetChildBlocksSlots =
    numbered_slots({slot::input("block_or_loop", ValueType::kBlockOrLoop), slot::output_count()});

constinit const InstructionSignature kGetChildBlocksSignature{
    .python_name = "get_child_blocks",
    .is_pure = true,
    .slots = kGetChildBlocksSlots,
    .outputs = OutputSignature::written(1, RVType::kBlock),
    .replay = replay_method<&Schedule::get_child_blocks>,
    .check = check_method<&Schedule::check_get_child_blocks>,
};

constinit const InstructionSignature kGetProducersSignature{
    .python_name = "get_producers",
    .is_pure = true,
    .slots = kBlockAndCountSlots,
    .outputs = OutputSignature::written(1, RVType::kBlock),
    .replay = replay_method<&Schedule::get_producers>,
    .check = check_method<&Schedule::check_get_producers>,
};

constinit const InstructionSignature kGetConsumersSignature{
    .python_name = "get_consumers",
    .is_pure = true,
    .slots = kBlockAndCountSlots,
    .outputs = OutputSignature::written(1, RVType::kBlock),
    .replay = replay_method<&Schedule::get_consumers>,
    .check = check_method<&Schedule::check_get_consumers>,
};

constexpr auto kGetOutputBlocksSlots = numbered_slots({slot::input("scope_block", ValueType::kBlock), slot::output_count()});

constinit const InstructionSignature kGetOutputBlocksSignature{
    .python_name = "get_output_blocks",
    .is_pure = true,
    .slots = kGetOutputBlocksSlots,
    .outputs = OutputSignature::written(1, RVType::kBlock),
    .replay = replay_method<&Schedule::get_output_blocks>,
    .check = check_method<&Schedule::check_get_output_blocks>,
};

}  // namespace detail
}  // namespace dragon::schedule
