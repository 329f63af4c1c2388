// Schedule::check: the kind's check (its declaration names it, in its primitive's file)
// over the operands read as replay reads them. Not the preconditions themselves (the plans).
#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "instruction_apply.h"
#include "instruction_check.h"

namespace dragon::schedule {

namespace detail {

void expect_count(InstructionKind kind, std::string_view what, const std::vector<Arg>& args, size_t n) {
  if (args.size() != n) {
    throw UserError(fmt::format("{}: expected {} {}, got {}", instruction_kind_name(kind), n, what, args.size()));
  }
}

void CheckedOperands::expect(size_t inputs, size_t attrs) const {
  if (known_.all()) {
    expect_count(inst_.kind, "inputs", inst_.inputs, inputs);
  } else {
    for (size_t i = 0; i < inputs; ++i) {
      if (known_.input(i) && i >= inst_.inputs.size()) expect_count(inst_.kind, "inputs", inst_.inputs, inputs);
    }
    if (inst_.inputs.size() > inputs) expect_count(inst_.kind, "inputs", inst_.inputs, inputs);
  }
  expect_attrs(attrs);
}

void CheckedOperands::expect_attrs(size_t attrs) const {
  if (known_.all()) {
    expect_count(inst_.kind, "attrs", inst_.attrs, attrs);
    return;
  }
  for (size_t i = 0; i < attrs; ++i) {
    if (known_.attr(i) && i >= inst_.attrs.size()) expect_count(inst_.kind, "attrs", inst_.attrs, attrs);
  }
  if (inst_.attrs.size() > attrs) expect_count(inst_.kind, "attrs", inst_.attrs, attrs);
}

const Arg* CheckedOperands::input(size_t i) const {
  return i < inst_.inputs.size() && known_.input(i) ? &inst_.inputs[i] : nullptr;
}

const Arg* CheckedOperands::attr(size_t i) const {
  return i < inst_.attrs.size() && known_.attr(i) ? &inst_.attrs[i] : nullptr;
}

std::optional<BlockRV> CheckedOperands::block(size_t i) const {
  const Arg* a = input(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<BlockRV>(inst_.kind, *a);
}

std::optional<LoopRV> CheckedOperands::loop(size_t i) const {
  const Arg* a = input(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<LoopRV>(inst_.kind, *a);
}

std::optional<BlockOrLoop> CheckedOperands::block_or_loop(size_t i) const {
  const Arg* a = input(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<BlockOrLoop>(inst_.kind, *a);
}

std::optional<int64_t> CheckedOperands::int_attr(size_t i) const {
  const Arg* a = attr(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<int64_t>(inst_.kind, *a);
}

std::optional<bool> CheckedOperands::bool_attr(size_t i) const {
  const Arg* a = attr(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<bool>(inst_.kind, *a);
}

std::optional<std::string_view> CheckedOperands::string_attr(size_t i) const {
  const Arg* a = attr(i);
  if (a == nullptr) return std::nullopt;
  return arg_as<std::string_view>(inst_.kind, *a);
}

std::optional<std::span<const Arg>> CheckedOperands::inputs_from(size_t i) const {
  if (!known_.inputs_from(i)) return std::nullopt;
  if (i >= inst_.inputs.size()) return std::span<const Arg>();
  return std::span<const Arg>(inst_.inputs).subspan(i);
}

}  // namespace detail

CheckResult Schedule::check(const Instruction& inst, const std::optional<Arg>& decision, KnownOperands known,
                            bool explain) const {
  const detail::CheckedOperands ops(inst, known);
  // Plans build their errors' text only when asked (restored however this returns).
  struct Explaining {
    bool& flag;
    bool saved;
    ~Explaining() { flag = saved; }
  } explaining{explain_, explain_};
  explain_ = explain;
  const CheckFn check_kind = instruction_signature(inst.kind).check;
  if (check_kind == nullptr) return detail::unknown();
  try {
    return check_kind(*this, ops, decision);
  } catch (const UserError&) {
    // Malformed operands: replay rejects the instruction before any precondition.
    return CheckResult{Verdict::kFails, std::nullopt, 0, std::nullopt};
  }
}

}  // namespace dragon::schedule
