// split: one loop into several nested loops whose combined index covers the old one;
// non-divisible factors guard the blocks below with a predicate.
#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

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

std::vector<LoopRV> Schedule::split(LoopRV loop_rv, const std::vector<SplitFactor>& factors,
                                    bool preserve_unit_iters) {
  constexpr InstructionKind kKind = InstructionKind::Split;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const std::string operand = fmt::format("loop {}", rv_name(loop_rv));
  const ErrorLocus here{loop->loop_var.get(), {}};
  // Factors resolve first (precondition 0 covers their random variables too).
  std::vector<std::optional<int64_t>> values;
  for (const SplitFactor& f : factors) {
    if (const auto* rv = std::get_if<ExprRV>(&f)) {
      values.push_back(resolve(*rv, kKind, "factor"));
    } else if (const auto* c = std::get_if<int64_t>(&f)) {
      values.push_back(*c);
    } else {
      values.push_back(std::nullopt);
    }
  }
  if (!is_const_int(loop->min, 0)) {
    throw error(kKind, 1, "LoopNotStartAtZero", operand, fmt::format("the loop starts at {}", print_expr(loop->min)),
                here);
  }
  if (loop->for_kind != ForKind::kSerial || !loop->annotations.empty()) {
    throw error(kKind, 2, "HasAnnotationOrBinding", operand,
                fmt::format("the loop is {}{}", for_kind_name(loop->for_kind),
                            loop->annotations.empty() ? "" : " and annotated"),
                here);
  }
  int inferred = -1;
  int64_t product = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      if (inferred >= 0) {
        throw error(kKind, 3, "NotSingleInferFactor", fmt::format("factors[{}]", i),
                    "more than one factor is None", here);
      }
      inferred = static_cast<int>(i);
      continue;
    }
    if (*values[i] <= 0 || *values[i] > int_max_value(loop->loop_var.dtype())) {
      throw error(kKind, 4, "NonPositiveFactor", fmt::format("factors[{}]", i),
                  fmt::format("the factor is {}, not in [1, {}]", *values[i], int_max_value(loop->loop_var.dtype())),
                  here);
    }
    product = product > INT64_MAX / *values[i] ? INT64_MAX : product * *values[i];
  }
  std::optional<int64_t> extent = as_const_int(loop->extent);
  if (!extent) {
    throw error(kKind, 6, "NonConstantExtent", operand,
                fmt::format("the extent {} is not a constant", print_expr(loop->extent)), here);
  }
  if (factors.empty()) throw error(kKind, 4, "NonPositiveFactor", "factors", "no factors given", here);
  if (inferred >= 0) {
    values[inferred] = (*extent + product - 1) / product;
    product = product > INT64_MAX / *values[inferred] ? INT64_MAX : product * *values[inferred];
  } else if (product < *extent) {
    throw error(kKind, 5, "WrongFactorProduct", operand,
                fmt::format("the factors multiply to {}, less than the extent {}", product, *extent), here);
  }
  // The combined index is computed in the loop's type: it must not overflow.
  if (product > int_max_value(loop->loop_var.dtype())) {
    throw error(kKind, 5, "WrongFactorProduct", operand,
                fmt::format("the factors multiply to {}, more than {} holds", product,
                            to_string(loop->loop_var.dtype())),
                here);
  }

  std::vector<int64_t> sizes;  // every factor is known now
  for (const auto& v : values) sizes.push_back(*v);
  auto [nest, vars] = split_loop(loop, sizes, /*guard=*/product > *extent, preserve_unit_iters,
                                 detail::analyzer_for(detail::path_to(func_, loop)));

  std::vector<LoopRV> outputs;
  for (const Var& v : vars) outputs.push_back(new_loop_rv(v));
  // Built member by member: GCC 12 warns falsely on variant copies out of init lists.
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(loop_rv);
  inst.attrs.emplace_back(preserve_unit_iters);
  inst.attrs.emplace_back(false);  // disable_predication (TVM v0.18): never
  for (const SplitFactor& f : factors) {
    if (const auto* rv = std::get_if<ExprRV>(&f)) inst.inputs.push_back(*rv);
    else if (const auto* c = std::get_if<int64_t>(&f)) inst.inputs.push_back(*c);
    else inst.inputs.push_back(None{});
  }
  for (LoopRV l : outputs) inst.outputs.push_back(l);
  commit(detail::replace_in_func(func_, loop, nest), std::move(inst));
  return outputs;
}

namespace detail {

std::vector<RandomVar> apply_split(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                   const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::Split;
  if (inputs.empty()) expect_count(kKind, "inputs", inputs, 2);
  // v0.12-0.16 wrote one attr (preserve_unit_iters), v0.18 adds disable_predication.
  if (attrs.size() != 1 && attrs.size() != 2) expect_count(kKind, "attrs", attrs, 2);
  if (attrs.size() == 2 && bool_arg(kKind, attrs[1])) {
    throw UserError("Split: disable_predication=true is not supported");
  }
  std::vector<SplitFactor> factors;
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].is_none()) factors.push_back(None{});
    else if (const auto* c = inputs[i].as<int64_t>()) factors.push_back(*c);
    else factors.push_back(ExprRV{rv_arg(kKind, inputs[i], RVType::kExpr).id});
  }
  return as_outputs(sch.split(loop_arg(kKind, inputs[0]), factors, bool_arg(kKind, attrs[0])));
}

}  // namespace detail
}  // namespace dragon::schedule
