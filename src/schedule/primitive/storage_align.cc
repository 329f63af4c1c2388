// storage_align: records on a block that lowering should pad a written intermediate
// buffer so one dimension's stride is offset modulo factor (the "buffer_dim_align"
// annotation, ir/buffer_dim_align.h). Changes no shape and no access; lowering pads.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/buffer_dim_align.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct StorageAlignPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Asks lowering to pad buffer `writes[buffer_index]` of the block so that the stride of
  // dimension `axis` (negative counts from the end) satisfies stride % factor == offset
  // (shared-memory bank conflicts). Shapes do not change: the block gets the annotation
  // "buffer_dim_align" (ir/buffer_dim_align.h), a string of entries
  // "<buffer>:<axis>:<factor>:<offset>" joined by ";", sorted by buffer name then axis,
  // axis normalized to [0, rank); a later storage_align of the same (buffer, axis) on the
  // block replaces its entry. flatten_buffers honours the entries of every block for the
  // buffer of that name, computing strides with ir::aligned_strides; entries are read
  // against the buffer's shape at lowering (a later transform_layout changes the axes).
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) axis is in [-rank, rank) (AxisOutOfRange)
  //   3) factor > 0 (InvalidFactor)
  //   4) 0 <= offset < factor (InvalidOffset)
  //   5) the buffer is allocated in a block, not a parameter (ParameterBuffer).
  void storage_align(BlockRV block, int64_t buffer_index, int64_t axis, int64_t factor, int64_t offset);
  CheckResult check_storage_align(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::StorageAlignPlan> plan_storage_align(BlockRV block, std::optional<int64_t> buffer_index,
                                                               std::optional<int64_t> axis,
                                                               std::optional<int64_t> factor,
                                                               std::optional<int64_t> offset) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

// What storage_align's construction needs: the block and its alignment entries with the
// new one added.
struct detail::StorageAlignPlan {
  const BlockNode* block = nullptr;
  std::vector<BufferDimAlign> entries;
};

detail::Planned<detail::StorageAlignPlan> Schedule::plan_storage_align(BlockRV block_rv,
                                                                       std::optional<int64_t> buffer_index,
                                                                       std::optional<int64_t> axis,
                                                                       std::optional<int64_t> factor,
                                                                       std::optional<int64_t> offset) const {
  constexpr InstructionKind kKind = InstructionKind::StorageAlign;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::StorageAlignPlan plan;
  const BlockNode* block = plan.block = *found;
  const ErrorLocus here{nullptr, block->name};
  if (!buffer_index) return plan;  // unknown: judged no further (undecided is always a safe answer)
  if (*buffer_index < 0 || *buffer_index >= static_cast<int64_t>(block->writes.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "buffer_index",
        [&] {
          return fmt::format("the index is {}, the block writes {} buffers", *buffer_index, block->writes.size());
        },
        here);
  }
  const Buffer buffer = block->writes[*buffer_index].buffer;
  const int64_t rank = buffer.ndim();
  if (axis && (*axis < -rank || *axis >= rank)) {
    return error(
        kKind, 2, "AxisOutOfRange", "axis",
        [&] { return fmt::format("the axis is {}, buffer '{}' has {} dimensions", *axis, buffer->name, rank); }, here);
  }
  if (factor && *factor <= 0) {
    return error(
        kKind, 3, "InvalidFactor", "factor", [&] { return fmt::format("the factor is {}, not positive", *factor); },
        here);
  }
  if (factor && offset && (*offset < 0 || *offset >= *factor)) {
    return error(
        kKind, 4, "InvalidOffset", "offset",
        [&] { return fmt::format("the offset is {}, not in [0, {})", *offset, *factor); }, here);
  }
  const bool param = std::any_of(func_->params.begin(), func_->params.end(),
                                 [&](const Param& p) { return p.buffer.same_as(buffer); });
  if (param) {
    return error(
        kKind, 5, "ParameterBuffer", [&] { return fmt::format("block {}", rv_name(block_rv)); },
        [&] { return fmt::format("'{}' is a parameter of the function, not an allocated buffer", buffer->name); },
        here);
  }
  // The block's existing entries, then this one: format keeps the last per (buffer, axis).
  auto it = block->annotations.find(kBufferDimAlignKey);
  if (it != block->annotations.end()) {
    const auto* text = std::get_if<std::string>(&it->second);
    DRAGON_CHECK(text != nullptr, "block '{}' has a non-string {} annotation", block->name, kBufferDimAlignKey);
    plan.entries = parse_buffer_dim_align(*text);
  }
  if (axis && factor && offset) {
    plan.entries.push_back(BufferDimAlign{buffer->name, *axis < 0 ? *axis + rank : *axis, *factor, *offset});
  }
  return plan;
}

void Schedule::storage_align(BlockRV block_rv, int64_t buffer_index, int64_t axis, int64_t factor, int64_t offset) {
  constexpr InstructionKind kKind = InstructionKind::StorageAlign;
  detail::StorageAlignPlan plan = plan_storage_align(block_rv, buffer_index, axis, factor, offset).take();
  const BlockNode* block = plan.block;
  std::vector<BufferDimAlign>& entries = plan.entries;
  Annotations annotations = block->annotations;
  annotations[std::string(kBufferDimAlignKey)] = format_buffer_dim_align(std::move(entries));
  Block aligned = BlockNode::make(block->name, block->iter_vars, block->reads, block->writes, block->body,
                                  block->init, block->alloc_buffers, std::move(annotations));
  PrimFunc result = detail::replace_in_func(func_, block, aligned);

  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv, buffer_index, axis, factor, offset));
}

CheckResult Schedule::check_storage_align(const detail::CheckedOperands& ops) const {
  ops.expect(1, 4);
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  auto axis = ops.int_attr(1);
  auto factor = ops.int_attr(2);
  auto offset = ops.int_attr(3);
  if (!block) return detail::unknown();
  return detail::verdict(plan_storage_align(*block, index, axis, factor, offset), index && axis && factor && offset, 0);
}

namespace detail {

constexpr auto kStorageAlignSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("buffer_index", ValueType::kInt),
    slot::attr("axis", ValueType::kInt),
    slot::attr("factor", ValueType::kInt),
    slot::attr("offset", ValueType::kInt),
});

constinit const InstructionSignature kStorageAlignSignature{
    .python_name = "storage_align",
    .slots = kStorageAlignSlots,
    .replay = replay_method<&Schedule::storage_align>,
    .check = check_method<&Schedule::check_storage_align>,
};

}  // namespace detail
}  // namespace dragon::schedule
