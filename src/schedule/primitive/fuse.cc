// fuse: consecutive perfectly nested loops into one whose index enumerates them in the
// same order (row-major), so execution order, and hence results, are unchanged.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct FusePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Fuses consecutive loops, outermost first, into one; each old variable becomes a
  // floordiv/floormod of the fused one (i64 when the product does not fit i32).
  // Requires:
  //   1) at least one loop, none twice (DuplicateLoop)
  //   2) each loop is the only child of the previous one (NotConsecutive)
  //   3) every loop starts at 0 and has a constant extent (LoopNotStartAtZero)
  //   4) every loop is serial, with no annotation and no binding (HasAnnotationOrBinding).
  LoopRV fuse(const std::vector<LoopRV>& loops, bool preserve_unit_iters = true);
  CheckResult check_fuse(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::FusePlan> plan_fuse(std::span<const LoopRV> loops) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The transformation itself, preconditions already checked: one loop over the product
// of the extents, enumerating the old loops' iterations in the same (row-major) order.
// `analyzer` knows the loops around the outermost one.
std::pair<Stmt, Var> fuse_loops(const std::vector<const ForNode*>& loops, const std::vector<int64_t>& extents,
                                bool preserve_unit_iters, Analyzer analyzer) {
  // The fused index is i64 when the product, or any old index, needs it.
  int64_t product = 1;
  bool wide = false;
  std::string name;
  for (size_t i = 0; i < loops.size(); ++i) {
    wide |= loops[i]->loop_var.dtype() == DataType::i64();
    product = extents[i] != 0 && product > INT64_MAX / extents[i] ? INT64_MAX : product * extents[i];
    name += loops[i]->loop_var.name() + "_";
  }
  wide |= product > INT32_MAX;
  const DataType type = wide ? DataType::i64() : DataType::i32();
  Var fused(name + "fused", type);

  analyzer.bind(fused, 0, product);
  std::unordered_map<const VarNode*, Expr> subst;
  int64_t inner = 1;
  for (size_t i = loops.size(); i-- > 0;) {
    const DataType old_type = loops[i]->loop_var.dtype();
    Expr value;
    if (extents[i] == 1 && !preserve_unit_iters) {
      value = make_zero(type);
    } else {
      value = inner == 1 ? Expr(fused) : floordiv(fused, make_const(type, static_cast<double>(inner)));
      if (i > 0) value = floormod(value, make_const(type, static_cast<double>(extents[i])));
    }
    subst[loops[i]->loop_var.get()] = old_type == type ? value : cast(old_type, value);
    inner = extents[i] != 0 && inner > INT64_MAX / extents[i] ? INT64_MAX : inner * extents[i];
  }
  Stmt body = detail::rewrite_loop_vars(loops.back()->body, subst, Expr(), analyzer);
  return {ForNode::make(fused, make_zero(type), make_const(type, static_cast<double>(product)), ForKind::kSerial, body),
          fused};
}

}  // namespace

// What fuse's construction needs: the loops, outermost first, and their extents.
struct detail::FusePlan {
  std::vector<const ForNode*> loops;
  std::vector<int64_t> extents;
};

detail::Planned<detail::FusePlan> Schedule::plan_fuse(std::span<const LoopRV> loop_rvs) const {
  constexpr InstructionKind kKind = InstructionKind::Fuse;
  detail::FusePlan plan;
  std::vector<const ForNode*>& loops = plan.loops;
  for (LoopRV rv : loop_rvs) {
    auto loop = find(rv, kKind, "loop");
    if (!loop.ok()) return std::move(loop).take_error();
    loops.push_back(*loop);
  }
  if (loops.empty()) return error(kKind, 1, "DuplicateLoop", "loops", "no loops given");
  for (size_t i = 0; i < loops.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (loops[i] == loops[j]) {
        return error(
            kKind, 1, "DuplicateLoop", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
            [&] {
              return fmt::format("the loop is given twice (as {} and {})", rv_name(loop_rvs[j]), rv_name(loop_rvs[i]));
            },
            ErrorLocus{loops[i]->loop_var.get(), {}});
      }
    }
  }
  for (size_t i = 1; i < loops.size(); ++i) {
    if (loops[i - 1]->body.get() != loops[i]) {
      return error(
          kKind, 2, "NotConsecutive", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
          [&] { return fmt::format("the loop is not the only child of loop {}", rv_name(loop_rvs[i - 1])); },
          ErrorLocus{loops[i - 1]->loop_var.get(), {}});
    }
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    auto extent = as_const_int(loops[i]->extent);
    if (!is_const_int(loops[i]->min, 0) || !extent) {
      return error(
          kKind, 3, "LoopNotStartAtZero", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
          [&] {
            return fmt::format("the loop ranges over {} +: {}", print_expr(loops[i]->min),
                               print_expr(loops[i]->extent));
          },
          ErrorLocus{loops[i]->loop_var.get(), {}});
    }
    plan.extents.push_back(*extent);
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    if (loops[i]->for_kind != ForKind::kSerial || !loops[i]->annotations.empty()) {
      return error(
          kKind, 4, "HasAnnotationOrBinding", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
          [&] {
            return fmt::format("the loop is {}{}", for_kind_name(loops[i]->for_kind),
                               loops[i]->annotations.empty() ? "" : " and annotated");
          },
          ErrorLocus{loops[i]->loop_var.get(), {}});
    }
  }
  return plan;
}

LoopRV Schedule::fuse(const std::vector<LoopRV>& loop_rvs, bool preserve_unit_iters) {
  constexpr InstructionKind kKind = InstructionKind::Fuse;
  const detail::FusePlan plan = plan_fuse(loop_rvs).take();
  auto [nest, fused] = fuse_loops(plan.loops, plan.extents, preserve_unit_iters,
                                  detail::analyzer_for(detail::path_to(func_, plan.loops.front())));

  LoopRV out = new_loop_rv(fused);
  commit(detail::replace_in_func(func_, plan.loops.front(), nest),
         detail::make_instruction(kKind, {out}, loop_rvs, preserve_unit_iters));
  return out;
}

CheckResult Schedule::check_fuse(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::Fuse;
  ops.expect_attrs(1);
  ops.bool_attr(0);
  auto args = ops.inputs_from(0);
  if (!args) return detail::unknown();
  std::vector<LoopRV> loops;
  for (const Arg& a : *args) loops.push_back(detail::arg_as<LoopRV>(kKind, a));
  return detail::verdict(plan_fuse(loops), true, 1);
}

namespace detail {

constexpr auto kFuseSlots = numbered_slots({
    slot::rest_of_inputs("loops", ValueType::kLoop),
    slot::attr("preserve_unit_iters", ValueType::kBool).defaults_to(true),
});

constinit const InstructionSignature kFuseSignature{
    .python_name = "fuse",
    .slots = kFuseSlots,
    .outputs = OutputSignature::one(RVType::kLoop),
    .replay = replay_method<&Schedule::fuse>,
    .check = check_method<&Schedule::check_fuse>,
};

}  // namespace detail
}  // namespace dragon::schedule
