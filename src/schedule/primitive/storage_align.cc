// storage_align: records on a block that lowering should pad a written intermediate
// buffer so one dimension's stride is offset modulo factor (the "buffer_dim_align"
// annotation, ir/buffer_dim_align.h). Changes no shape and no access; lowering pads.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/buffer_dim_align.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

void Schedule::storage_align(BlockRV block_rv, int64_t buffer_index, int64_t axis, int64_t factor, int64_t offset) {
  constexpr InstructionKind kKind = InstructionKind::StorageAlign;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const ErrorLocus here{nullptr, block->name};
  if (buffer_index < 0 || buffer_index >= static_cast<int64_t>(block->writes.size())) {
    throw error(kKind, 1, "IndexOutOfRange", "buffer_index",
                fmt::format("the index is {}, the block writes {} buffers", buffer_index, block->writes.size()), here);
  }
  const Buffer buffer = block->writes[buffer_index].buffer;
  const int64_t rank = buffer.ndim();
  if (axis < -rank || axis >= rank) {
    throw error(kKind, 2, "AxisOutOfRange", "axis",
                fmt::format("the axis is {}, buffer '{}' has {} dimensions", axis, buffer->name, rank), here);
  }
  if (factor <= 0) {
    throw error(kKind, 3, "InvalidFactor", "factor", fmt::format("the factor is {}, not positive", factor), here);
  }
  if (offset < 0 || offset >= factor) {
    throw error(kKind, 4, "InvalidOffset", "offset",
                fmt::format("the offset is {}, not in [0, {})", offset, factor), here);
  }
  const bool param = std::any_of(func_->params.begin(), func_->params.end(),
                                 [&](const Param& p) { return p.buffer.same_as(buffer); });
  if (param) {
    throw error(kKind, 5, "ParameterBuffer", fmt::format("block {}", rv_name(block_rv)),
                fmt::format("'{}' is a parameter of the function, not an allocated buffer", buffer->name), here);
  }

  // The block's existing entries, then this one: format keeps the last per (buffer, axis).
  std::vector<BufferDimAlign> entries;
  auto it = block->annotations.find(kBufferDimAlignKey);
  if (it != block->annotations.end()) {
    const auto* text = std::get_if<std::string>(&it->second);
    DRAGON_CHECK(text != nullptr, "block '{}' has a non-string {} annotation", block->name, kBufferDimAlignKey);
    entries = parse_buffer_dim_align(*text);
  }
  entries.push_back(BufferDimAlign{buffer->name, axis < 0 ? axis + rank : axis, factor, offset});
  Annotations annotations = block->annotations;
  annotations[std::string(kBufferDimAlignKey)] = format_buffer_dim_align(std::move(entries));
  Block aligned = BlockNode::make(block->name, block->iter_vars, block->reads, block->writes, block->body,
                                  block->init, block->alloc_buffers, std::move(annotations));
  PrimFunc result = detail::replace_in_func(func_, block, aligned);

  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.attrs = {Arg(buffer_index), Arg(axis), Arg(factor), Arg(offset)};
  commit(std::move(result), std::move(inst));
}

namespace detail {

std::vector<RandomVar> apply_storage_align(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                           const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::StorageAlign;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 4);
  sch.storage_align(block_arg(kKind, inputs[0]), int_arg(kKind, attrs[0]), int_arg(kKind, attrs[1]),
                    int_arg(kKind, attrs[2]), int_arg(kKind, attrs[3]));
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
