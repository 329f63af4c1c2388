// annotate / unannotate: set or remove a key of a block's or loop's annotations (hints
// for lowering and search such as pragma_auto_unroll_max_step); never changes semantics.
#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../ir_tree.h"

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

void Schedule::annotate(BlockOrLoop target, std::string key, AnnotationInput value) {
  constexpr InstructionKind kKind = InstructionKind::Annotate;
  const StmtNode* node = std::holds_alternative<BlockRV>(target)
                             ? static_cast<const StmtNode*>(resolve(std::get<BlockRV>(target), kKind, "block"))
                             : static_cast<const StmtNode*>(resolve(std::get<LoopRV>(target), kKind, "loop"));
  AnnotationValue stored;
  Arg recorded;
  if (const auto* rv = std::get_if<ExprRV>(&value)) {
    stored = resolve(*rv, kKind, "value");
    recorded = *rv;
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    stored = *i;
    recorded = *i;
  } else if (const auto* d = std::get_if<double>(&value)) {
    stored = *d;
    recorded = *d;
  } else {
    stored = std::get<std::string>(value);
    recorded = std::get<std::string>(value);
  }
  PrimFunc result = with_annotations(func_, node, [&](Annotations& ann) { ann[key] = stored; });
  Arg target_arg = std::holds_alternative<BlockRV>(target) ? Arg(std::get<BlockRV>(target)) : Arg(std::get<LoopRV>(target));
  commit(std::move(result), Instruction{kKind, {target_arg, recorded}, {key}, {}});
}

void Schedule::unannotate(BlockOrLoop target, std::string key) {
  constexpr InstructionKind kKind = InstructionKind::Unannotate;
  const bool is_block = std::holds_alternative<BlockRV>(target);
  const StmtNode* node = is_block ? static_cast<const StmtNode*>(resolve(std::get<BlockRV>(target), kKind, "block"))
                                  : static_cast<const StmtNode*>(resolve(std::get<LoopRV>(target), kKind, "loop"));
  const Annotations& ann = is_block ? static_cast<const BlockNode*>(node)->annotations
                                    : static_cast<const ForNode*>(node)->annotations;
  Arg target_arg = is_block ? Arg(std::get<BlockRV>(target)) : Arg(std::get<LoopRV>(target));
  if (!ann.count(key)) {
    ErrorLocus locus = is_block ? ErrorLocus{nullptr, static_cast<const BlockNode*>(node)->name}
                                : ErrorLocus{static_cast<const ForNode*>(node)->loop_var.get(), {}};
    throw error(kKind, 1, "AnnotationNotFound", fmt::format("key \"{}\"", key),
                fmt::format("{} {} has no annotation '{}'", is_block ? "block" : "loop", to_string(target_arg), key),
                locus);
  }
  PrimFunc result = with_annotations(func_, node, [&](Annotations& a) { a.erase(key); });
  commit(std::move(result), Instruction{kKind, {target_arg}, {key}, {}});
}

namespace detail {

std::vector<RandomVar> apply_annotate(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                      const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::Annotate;
  expect_count(kKind, "inputs", inputs, 2);
  expect_count(kKind, "attrs", attrs, 1);
  AnnotationInput value;
  if (const auto* i = inputs[1].as<int64_t>()) value = *i;
  else if (const auto* d = inputs[1].as<double>()) value = *d;
  else if (const auto* s = inputs[1].as<std::string>()) value = *s;
  else if (const auto* b = inputs[1].as<bool>()) value = int64_t{*b};
  else value = ExprRV{rv_arg(kKind, inputs[1], RVType::kExpr).id};
  sch.annotate(block_or_loop_arg(kKind, inputs[0]), string_arg(kKind, attrs[0]), std::move(value));
  return {};
}

std::vector<RandomVar> apply_unannotate(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                        const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::Unannotate;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 1);
  sch.unannotate(block_or_loop_arg(kKind, inputs[0]), string_arg(kKind, attrs[0]));
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
