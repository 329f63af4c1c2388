// annotate / unannotate: set or remove a key of a block's or loop's annotations (hints
// for lowering and search such as pragma_auto_unroll_max_step); never changes semantics.
#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct AnnotatePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Sets annotation `key` of a block or loop (an ExprRV is stored as its integer).
  void annotate(BlockOrLoop target, std::string key, AnnotationInput value);
  // Removes annotation `key`.
  // Requires:
  //   1) the block or loop has it (AnnotationNotFound).
  void unannotate(BlockOrLoop target, std::string key);
  CheckResult check_annotate(const detail::CheckedOperands& ops) const;
  CheckResult check_unannotate(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::AnnotatePlan> plan_annotate(const BlockOrLoop& target, const AnnotationInput* value) const;
  detail::Planned<const ir::StmtNode*> plan_unannotate(const BlockOrLoop& target,
                                                       std::optional<std::string_view> key) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The target with its annotations replaced by `update(annotations)`.
template <typename Update>
PrimFunc with_annotations(const PrimFunc& func, const StmtNode* target, const Update& update) {
  if (target->kind == NodeKind::For) {
    const auto* l = static_cast<const ForNode*>(target);
    Annotations ann = l->annotations;
    update(ann);
    return detail::replace_in_func(
        func, l, ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, l->body, l->thread_tag, std::move(ann)));
  }
  const auto* b = static_cast<const BlockNode*>(target);
  Annotations ann = b->annotations;
  update(ann);
  return detail::replace_in_func(
      func, b, BlockNode::make(b->name, b->iter_vars, b->reads, b->writes, b->body, b->init, b->alloc_buffers, std::move(ann)));
}

}  // namespace

// What annotate's construction needs: the target and the value to store.
struct detail::AnnotatePlan {
  const StmtNode* node = nullptr;
  AnnotationValue stored;
};

namespace {

// The block or loop a target names, or its precondition-0 error.
template <typename Find>
detail::Planned<const StmtNode*> find_target(const BlockOrLoop& target, const Find& find) {
  if (const auto* b = std::get_if<BlockRV>(&target)) {
    auto block = find(*b, "block");
    if (!block.ok()) return std::move(block).take_error();
    return static_cast<const StmtNode*>(*block);
  }
  auto loop = find(std::get<LoopRV>(target), "loop");
  if (!loop.ok()) return std::move(loop).take_error();
  return static_cast<const StmtNode*>(*loop);
}

}  // namespace

detail::Planned<detail::AnnotatePlan> Schedule::plan_annotate(const BlockOrLoop& target,
                                                              const AnnotationInput* value) const {
  constexpr InstructionKind kKind = InstructionKind::Annotate;
  auto node = find_target(target, [&](auto rv, std::string_view role) { return find(rv, kKind, role); });
  if (!node.ok()) return std::move(node).take_error();
  detail::AnnotatePlan plan;
  plan.node = *node;
  if (value == nullptr) return plan;
  if (const auto* rv = std::get_if<ExprRV>(value)) {
    auto v = find(*rv, kKind, "value");
    if (!v.ok()) return std::move(v).take_error();
    plan.stored = *v;
  } else if (const auto* i = std::get_if<int64_t>(value)) {
    plan.stored = *i;
  } else if (const auto* d = std::get_if<double>(value)) {
    plan.stored = *d;
  } else {
    plan.stored = std::get<std::string>(*value);
  }
  return plan;
}

void Schedule::annotate(BlockOrLoop target, std::string key, AnnotationInput value) {
  constexpr InstructionKind kKind = InstructionKind::Annotate;
  detail::AnnotatePlan plan = plan_annotate(target, &value).take();
  PrimFunc result = with_annotations(func_, plan.node, [&](Annotations& ann) { ann[key] = plan.stored; });
  commit(std::move(result), detail::make_instruction(kKind, {}, target, key, value));
}

detail::Planned<const StmtNode*> Schedule::plan_unannotate(const BlockOrLoop& target,
                                                           std::optional<std::string_view> key) const {
  constexpr InstructionKind kKind = InstructionKind::Unannotate;
  auto found = find_target(target, [&](auto rv, std::string_view role) { return find(rv, kKind, role); });
  if (!found.ok() || !key) return found;
  const StmtNode* node = *found;
  const bool is_block = node->kind == NodeKind::Block;
  const Annotations& ann = is_block ? static_cast<const BlockNode*>(node)->annotations
                                    : static_cast<const ForNode*>(node)->annotations;
  if (ann.find(*key) == ann.end()) {
    const Arg target_arg = is_block ? Arg(std::get<BlockRV>(target)) : Arg(std::get<LoopRV>(target));
    ErrorLocus locus = is_block ? ErrorLocus{nullptr, static_cast<const BlockNode*>(node)->name}
                                : ErrorLocus{static_cast<const ForNode*>(node)->loop_var.get(), {}};
    return error(
        kKind, 1, "AnnotationNotFound", [&] { return fmt::format("key \"{}\"", *key); },
        [&] {
          return fmt::format("{} {} has no annotation '{}'", is_block ? "block" : "loop", to_string(target_arg), *key);
        },
        locus);
  }
  return node;
}

void Schedule::unannotate(BlockOrLoop target, std::string key) {
  constexpr InstructionKind kKind = InstructionKind::Unannotate;
  const StmtNode* node = plan_unannotate(target, key).take();
  PrimFunc result = with_annotations(func_, node, [&](Annotations& a) { a.erase(key); });
  commit(std::move(result), detail::make_instruction(kKind, {}, target, key));
}

CheckResult Schedule::check_annotate(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::Annotate;
  ops.expect(2, 1);
  ops.string_attr(0);  // the key: only stored
  auto target = ops.block_or_loop(0);
  std::optional<AnnotationInput> value;
  if (const Arg* v = ops.input(1)) value = detail::arg_as<AnnotationInput>(kKind, *v);
  if (!target) return detail::unknown();
  return detail::verdict(plan_annotate(*target, value ? &*value : nullptr), value.has_value(), 0);
}

CheckResult Schedule::check_unannotate(const detail::CheckedOperands& ops) const {
  ops.expect(1, 1);
  auto target = ops.block_or_loop(0);
  auto key = ops.string_attr(0);
  if (!target) return detail::unknown();
  return detail::verdict(plan_unannotate(*target, key), key.has_value(), 0);
}

namespace detail {

constexpr auto kAnnotateSlots = numbered_slots({
    slot::input("block_or_loop", ValueType::kBlockOrLoop),
    slot::attr("ann_key", ValueType::kString).of(Vocabulary::kAnnotationKey),
    slot::input("ann_val", ValueType::kAnnValue),
});

constinit const InstructionSignature kAnnotateSignature{
    .python_name = "annotate",
    .slots = kAnnotateSlots,
    .replay = replay_method<&Schedule::annotate>,
    .check = check_method<&Schedule::check_annotate>,
};

constexpr auto kUnannotateSlots = numbered_slots({
    slot::input("block_or_loop", ValueType::kBlockOrLoop),
    slot::attr("ann_key", ValueType::kString).of(Vocabulary::kAnnotationKey),
});

constinit const InstructionSignature kUnannotateSignature{
    .python_name = "unannotate",
    .slots = kUnannotateSlots,
    .replay = replay_method<&Schedule::unannotate>,
    .check = check_method<&Schedule::check_unannotate>,
};

}  // namespace detail
}  // namespace dragon::schedule
