// split: one loop into several nested loops whose combined index covers the old one;
// non-divisible factors guard the blocks below with a predicate.
#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct SplitPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Splits `loop` into len(factors) nested loops, outermost first; the old variable
  // becomes ((l0 * f1 + l1) * f2 + l2)...; a product larger than the extent guards the
  // blocks below with the predicate `that expression < extent`. With
  // preserve_unit_iters false, unit loops do not appear in bindings.
  // Requires:
  //   1) the loop starts at 0 (LoopNotStartAtZero)
  //   2) it is serial with no annotation and no thread binding (HasAnnotationOrBinding)
  //   3) at most one factor is None (NotSingleInferFactor)
  //   4) every factor is positive and fits the loop's index type (NonPositiveFactor)
  //   5) the product covers the extent when none is inferred, and fits the loop's index
  //      type (WrongFactorProduct)
  //   6) the extent is a constant (NonConstantExtent).
  std::vector<LoopRV> split(LoopRV loop, const std::vector<SplitFactor>& factors, bool preserve_unit_iters = true);
  CheckResult check_split(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::SplitPlan> plan_split(LoopRV loop, const std::vector<SplitFactor>* factors) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The transformation itself, preconditions already checked: the nest of new loops, l0
// (outermost) .. ln-1, over the old body whose index becomes ((l0 * f1 + l1) * f2 + l2)...
// `analyzer` knows the loops around `loop`.
std::pair<Stmt, std::vector<Var>> split_loop(const ForNode* loop, const std::vector<int64_t>& factors, bool guard,
                                             bool preserve_unit_iters, Analyzer analyzer) {
  const DataType type = loop->loop_var.dtype();
  std::vector<Var> vars;
  Expr index;
  for (size_t i = 0; i < factors.size(); ++i) {
    Var v(fmt::format("{}_{}", loop->loop_var.name(), i), type);
    analyzer.bind(v, 0, factors[i]);
    vars.push_back(v);
    bool unit = factors[i] == 1 && !preserve_unit_iters;
    Expr term = unit ? make_zero(type) : Expr(v);
    index = index.defined() ? index * make_const(type, static_cast<double>(factors[i])) + term : term;
  }
  // Factors multiplying past the extent run extra iterations: the blocks skip them.
  Expr predicate = guard ? Expr(index < loop->extent) : Expr();
  Stmt body = detail::rewrite_loop_vars(loop->body, {{loop->loop_var.get(), index}}, predicate, analyzer);
  for (size_t i = factors.size(); i-- > 0;) {
    body = ForNode::make(vars[i], make_zero(type), make_const(type, static_cast<double>(factors[i])),
                         ForKind::kSerial, body);
  }
  return {body, vars};
}

}  // namespace

// What split's construction needs: the loop, every factor (the inferred one computed),
// and whether the product passes the extent (the blocks below are then guarded).
struct detail::SplitPlan {
  const ForNode* loop = nullptr;
  std::vector<int64_t> sizes;
  bool guard = false;
};

detail::Planned<detail::SplitPlan> Schedule::plan_split(LoopRV loop_rv, const std::vector<SplitFactor>* factors) const {
  constexpr InstructionKind kKind = InstructionKind::Split;
  auto found = find(loop_rv, kKind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  auto operand = [&] { return fmt::format("loop {}", rv_name(loop_rv)); };
  const ErrorLocus here{loop->loop_var.get(), {}};
  // Factors resolve first (precondition 0 covers their random variables too).
  std::vector<std::optional<int64_t>> values;
  if (factors != nullptr) {
    for (const SplitFactor& f : *factors) {
      if (const auto* rv = std::get_if<ExprRV>(&f)) {
        auto value = find(*rv, kKind, "factor");
        if (!value.ok()) return std::move(value).take_error();
        values.push_back(*value);
      } else if (const auto* c = std::get_if<int64_t>(&f)) {
        values.push_back(*c);
      } else {
        values.push_back(std::nullopt);
      }
    }
  }
  if (!is_const_int(loop->min, 0)) {
    return error(
        kKind, 1, "LoopNotStartAtZero", operand,
        [&] { return fmt::format("the loop starts at {}", print_expr(loop->min)); }, here);
  }
  if (loop->for_kind != ForKind::kSerial || !loop->annotations.empty()) {
    return error(
        kKind, 2, "HasAnnotationOrBinding", operand,
        [&] {
          return fmt::format("the loop is {}{}", for_kind_name(loop->for_kind),
                             loop->annotations.empty() ? "" : " and annotated");
        },
        here);
  }
  int inferred = -1;
  int64_t product = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      if (inferred >= 0) {
        return error(
            kKind, 3, "NotSingleInferFactor", [&] { return fmt::format("factors[{}]", i); },
            "more than one factor is None", here);
      }
      inferred = static_cast<int>(i);
      continue;
    }
    if (*values[i] <= 0 || *values[i] > int_max_value(loop->loop_var.dtype())) {
      return error(
          kKind, 4, "NonPositiveFactor", [&] { return fmt::format("factors[{}]", i); },
          [&] {
            return fmt::format("the factor is {}, not in [1, {}]", *values[i], int_max_value(loop->loop_var.dtype()));
          },
          here);
    }
    product = product > INT64_MAX / *values[i] ? INT64_MAX : product * *values[i];
  }
  std::optional<int64_t> extent = as_const_int(loop->extent);
  if (!extent) {
    return error(
        kKind, 6, "NonConstantExtent", operand,
        [&] { return fmt::format("the extent {} is not a constant", print_expr(loop->extent)); }, here);
  }
  detail::SplitPlan plan;
  plan.loop = loop;
  if (factors == nullptr) return plan;  // the factors are unknown: preconditions 3-5 read them
  if (factors->empty()) return error(kKind, 4, "NonPositiveFactor", "factors", "no factors given", here);
  if (inferred >= 0) {
    values[inferred] = (*extent + product - 1) / product;
    product = product > INT64_MAX / *values[inferred] ? INT64_MAX : product * *values[inferred];
  } else if (product < *extent) {
    return error(
        kKind, 5, "WrongFactorProduct", operand,
        [&] { return fmt::format("the factors multiply to {}, less than the extent {}", product, *extent); }, here);
  }
  // The combined index is computed in the loop's type: it must not overflow.
  if (product > int_max_value(loop->loop_var.dtype())) {
    return error(
        kKind, 5, "WrongFactorProduct", operand,
        [&] {
          return fmt::format("the factors multiply to {}, more than {} holds", product,
                             to_string(loop->loop_var.dtype()));
        },
        here);
  }
  for (const auto& v : values) plan.sizes.push_back(*v);  // every factor is known now
  plan.guard = product > *extent;
  return plan;
}

std::vector<LoopRV> Schedule::split(LoopRV loop_rv, const std::vector<SplitFactor>& factors, bool preserve_unit_iters) {
  constexpr InstructionKind kKind = InstructionKind::Split;
  const detail::SplitPlan plan = plan_split(loop_rv, &factors).take();
  const ForNode* loop = plan.loop;
  auto [nest, vars] =
      split_loop(loop, plan.sizes, plan.guard, preserve_unit_iters, detail::analyzer_for(detail::path_to(func_, loop)));

  std::vector<LoopRV> outputs;
  for (const Var& v : vars) outputs.push_back(new_loop_rv(v));
  commit(detail::replace_in_func(func_, loop, nest),
         detail::make_instruction(kKind, detail::as_outputs(outputs), loop_rv, factors, preserve_unit_iters,
                                  /*disable_predication=*/false));
  return outputs;
}

CheckResult Schedule::check_split(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::Split;
  // Replay: the loop, then the factors to the end; preserve_unit_iters and
  // disable_predication (which only false passes: UserError otherwise).
  if (ops.complete() && ops.input_count() == 0) detail::expect_count(kKind, "inputs", {}, 2);
  if (ops.complete() && ops.attr_count() != 1) ops.expect_attrs(2);  // one attr: TVM v0.12-0.16
  ops.bool_attr(0);
  if (auto disable = ops.bool_attr(1); disable && *disable)
    throw UserError("Split: disable_predication=true is not supported");
  auto loop = ops.loop(0);
  std::optional<std::vector<SplitFactor>> factors;
  if (auto args = ops.inputs_from(1)) {
    factors.emplace();
    for (const Arg& a : *args) factors->push_back(detail::arg_as<SplitFactor>(kKind, a));
  }
  if (!loop) return detail::unknown();
  const size_t outputs = factors ? factors->size() : 0;
  const bool decided = factors && (ops.complete() || ops.attr(1) != nullptr);
  return detail::verdict(plan_split(*loop, factors ? &*factors : nullptr), decided, outputs);
}

namespace detail {

constexpr auto kSplitSlots = numbered_slots({
    slot::input("loop", ValueType::kLoop),
    slot::rest_of_inputs("factors", ValueType::kSplitFactor),
    slot::attr("preserve_unit_iters", ValueType::kBool).defaults_to(true),
    slot::attr("disable_predication", ValueType::kBool).defaults_to(false),
});

std::vector<RandomVar> replay_split(Schedule& sch, const Operands& operands) {
  auto [loop, factors, preserve_unit_iters, disable_predication] =
      operands.unpack<LoopRV, std::vector<SplitFactor>, bool, bool>();
  if (disable_predication) throw UserError("Split: disable_predication=true is not supported");
  return as_outputs(sch.split(loop, factors, preserve_unit_iters));
}

// TVM v0.12-0.16 wrote one attr, preserve_unit_iters.
std::optional<Instruction> split_from_older_tvm(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) {
  if (attrs.size() != 1) return std::nullopt;
  return Instruction{InstructionKind::Split, inputs, {attrs[0], Arg(false)}, {}};
}

constinit const InstructionSignature kSplitSignature{
    .python_name = "split",
    .slots = kSplitSlots,
    .outputs = OutputSignature::per_value_of(1, RVType::kLoop),
    .replay = replay_split,
    .upgrade = split_from_older_tvm,
    .check = check_method<&Schedule::check_split>,
};

}  // namespace detail
}  // namespace dragon::schedule
