// Lookup primitives (pure): get_block, get_loops, get_child_blocks, get_producers,
// get_consumers. They read the IR and record an instruction; they never change the IR.
#include <algorithm>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

BlockRV Schedule::get_block(std::string_view name) {
  const BlockRealizeNode* realize = detail::find_block_realize(func_, name);
  if (realize == nullptr) {
    throw error(InstructionKind::GetBlock, 1, "BlockNotFound", fmt::format("name \"{}\"", name),
                fmt::format("no block is named '{}'", name));
  }
  BlockRV rv = new_block_rv(std::string(name));
  // func_name is always "main", as in TVM's single-function modules: a trace applies to
  // any function with the same structure, whatever the function is called.
  record(Instruction{InstructionKind::GetBlock, {}, {std::string(name), std::string("main")}, {rv}});
  return rv;
}

std::vector<LoopRV> Schedule::get_loops(BlockRV block) {
  const BlockNode* b = resolve(block, InstructionKind::GetLoops, "block");
  std::vector<LoopRV> loops;
  for (const ForNode* loop : detail::loops_above(detail::path_to(func_, b))) loops.push_back(new_loop_rv(loop->loop_var));
  Instruction inst{InstructionKind::GetLoops, {block}, {}, {}};
  for (LoopRV l : loops) inst.outputs.push_back(l);
  record(std::move(inst));
  return loops;
}

std::vector<BlockRV> Schedule::get_child_blocks(BlockOrLoop parent) {
  Stmt root;
  Arg input;
  if (const auto* b = std::get_if<BlockRV>(&parent)) {
    root = Stmt(resolve(*b, InstructionKind::GetChildBlocks, "block"));
    input = *b;
  } else {
    LoopRV l = std::get<LoopRV>(parent);
    root = Stmt(resolve(l, InstructionKind::GetChildBlocks, "loop"));
    input = l;
  }
  std::vector<BlockRV> blocks;
  for (const BlockRealizeNode* r : detail::child_block_realizes(root)) blocks.push_back(new_block_rv(r->block->name));
  Instruction inst{InstructionKind::GetChildBlocks, {input}, {}, {}};
  for (BlockRV b : blocks) inst.outputs.push_back(b);
  record(std::move(inst));
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

// The sibling blocks of `block` in its scope, in program order, and its own position.
std::pair<std::vector<const BlockNode*>, size_t> siblings(const PrimFunc& func, const BlockNode* block) {
  auto path = detail::path_to(func, block);
  const BlockNode* scope = detail::scope_block(path);
  std::vector<const BlockNode*> out;
  size_t self = 0;
  if (scope == nullptr) return {out, self};
  for (const BlockRealizeNode* r : detail::child_block_realizes(Stmt(scope))) {
    if (r->block.get() == block) self = out.size();
    out.push_back(r->block.get());
  }
  return {out, self};
}

}  // namespace

std::vector<BlockRV> Schedule::get_producers(BlockRV block) {
  const BlockNode* b = resolve(block, InstructionKind::GetProducers, "block");
  auto [blocks, self] = siblings(func_, b);
  std::vector<BlockRV> result;
  for (size_t i = 0; i < self; ++i) {
    if (writes_what_reads(blocks[i], b)) result.push_back(new_block_rv(blocks[i]->name));
  }
  Instruction inst{InstructionKind::GetProducers, {block}, {}, {}};
  for (BlockRV r : result) inst.outputs.push_back(r);
  record(std::move(inst));
  return result;
}

std::vector<BlockRV> Schedule::get_consumers(BlockRV block) {
  const BlockNode* b = resolve(block, InstructionKind::GetConsumers, "block");
  auto [blocks, self] = siblings(func_, b);
  std::vector<BlockRV> result;
  for (size_t i = self + 1; i < blocks.size(); ++i) {
    if (writes_what_reads(b, blocks[i])) result.push_back(new_block_rv(blocks[i]->name));
  }
  Instruction inst{InstructionKind::GetConsumers, {block}, {}, {}};
  for (BlockRV r : result) inst.outputs.push_back(r);
  record(std::move(inst));
  return result;
}

namespace detail {

std::vector<RandomVar> apply_get_block(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                       const std::optional<Arg>&) {
  expect_count(InstructionKind::GetBlock, "inputs", inputs, 0);
  expect_count(InstructionKind::GetBlock, "attrs", attrs, 2);
  return {sch.get_block(string_arg(InstructionKind::GetBlock, attrs[0]))};
}

std::vector<RandomVar> apply_get_loops(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                       const std::optional<Arg>&) {
  expect_count(InstructionKind::GetLoops, "inputs", inputs, 1);
  expect_count(InstructionKind::GetLoops, "attrs", attrs, 0);
  return as_outputs(sch.get_loops(block_arg(InstructionKind::GetLoops, inputs[0])));
}

std::vector<RandomVar> apply_get_child_blocks(Schedule& sch, const std::vector<Arg>& inputs,
                                              const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  expect_count(InstructionKind::GetChildBlocks, "inputs", inputs, 1);
  expect_count(InstructionKind::GetChildBlocks, "attrs", attrs, 0);
  return as_outputs(sch.get_child_blocks(block_or_loop_arg(InstructionKind::GetChildBlocks, inputs[0])));
}

std::vector<RandomVar> apply_get_producers(Schedule& sch, const std::vector<Arg>& inputs,
                                           const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  expect_count(InstructionKind::GetProducers, "inputs", inputs, 1);
  expect_count(InstructionKind::GetProducers, "attrs", attrs, 0);
  return as_outputs(sch.get_producers(block_arg(InstructionKind::GetProducers, inputs[0])));
}

std::vector<RandomVar> apply_get_consumers(Schedule& sch, const std::vector<Arg>& inputs,
                                           const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  expect_count(InstructionKind::GetConsumers, "inputs", inputs, 1);
  expect_count(InstructionKind::GetConsumers, "attrs", attrs, 0);
  return as_outputs(sch.get_consumers(block_arg(InstructionKind::GetConsumers, inputs[0])));
}

}  // namespace detail
}  // namespace dragon::schedule
