// Replaying one instruction by its kind's declaration (apply_instruction.h and the
// dispatcher Trace::apply_to uses), and the declaration-driven recording and unpacking
// helpers primitives share (instruction_apply.h).
#include "dragon/schedule/apply_instruction.h"

#include <fmt/format.h>

#include "instruction_apply.h"

namespace dragon::schedule {

std::vector<RandomVar> apply_instruction(Schedule& sch, const Instruction& inst, const std::optional<Arg>& decision) {
  return detail::replay(sch, inst.kind, inst.inputs, inst.attrs, decision);
}

namespace detail {

std::vector<RandomVar> replay(Schedule& sch, InstructionKind kind, const std::vector<Arg>& inputs,
                              const std::vector<Arg>& attrs, const std::optional<Arg>& decision) {
  const InstructionSignature& signature = instruction_signature(kind);
  if (signature.upgrade != nullptr) {
    if (std::optional<Instruction> pinned = signature.upgrade(inputs, attrs)) {
      return signature.replay(sch, Operands(kind, pinned->inputs, pinned->attrs, decision));
    }
  }
  return signature.replay(sch, Operands(kind, inputs, attrs, decision));
}

// ---- Recording -------------------------------------------------------------------------

const SlotSignature& next_operand_slot(InstructionKind kind, size_t& s) {
  const std::span<const SlotSignature> slots = instruction_signature(kind).slots;
  while (s < slots.size() && slots[s].source == SlotSource::kOutputCount) ++s;
  DRAGON_CHECK(s < slots.size(), "{} has more operands than its declaration has slots", instruction_kind_name(kind));
  return slots[s++];
}

void check_all_operands(InstructionKind kind, size_t s, std::string_view what) {
  const std::span<const SlotSignature> slots = instruction_signature(kind).slots;
  while (s < slots.size() && slots[s].source == SlotSource::kOutputCount) ++s;
  DRAGON_CHECK(s == slots.size(), "{} {} fewer operands than its declaration has slots", instruction_kind_name(kind),
               what);
}

void place(InstructionKind kind, const SlotSignature& slot, Arg value, Instruction& inst) {
  auto check = [&](const Arg& a) {
    DRAGON_CHECK(fits_value_type(a, slot.type), "{} records {} = {}, not a value of the slot's type",
                 instruction_kind_name(kind), slot.name, to_string(a));
  };
  if (slot.shape == SlotShape::kSingle) {
    check(value);
  } else {
    const auto* list = value.as<Arg::List>();
    DRAGON_CHECK(list != nullptr, "{} records {} = {}, not a list", instruction_kind_name(kind), slot.name,
                 to_string(value));
    for (const Arg& a : *list) check(a);
  }
  switch (slot.source) {
    case SlotSource::kInput: inst.inputs.push_back(std::move(value)); break;
    case SlotSource::kAttr: inst.attrs.push_back(std::move(value)); break;
    case SlotSource::kInputsFrom: {
      auto& list = *value.as<Arg::List>();
      inst.inputs.insert(inst.inputs.end(), std::make_move_iterator(list.begin()), std::make_move_iterator(list.end()));
      break;
    }
    case SlotSource::kOutputCount: break;
  }
}

// ---- Replay ----------------------------------------------------------------------------

namespace {
[[noreturn]] void bad_value(InstructionKind kind, std::string_view expected, const Arg& arg) {
  throw UserError(fmt::format("{}: expected {}, got {}", instruction_kind_name(kind), expected, to_string(arg)));
}
}  // namespace

Operands::Operands(InstructionKind kind, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                   const std::optional<Arg>& decision)
    : kind_(kind), inputs_(inputs), attrs_(attrs), decision_(decision) {
  size_t fixed_inputs = 0, attr_count = 0;
  bool inputs_open = false;
  for (const SlotSignature& slot : instruction_signature(kind).slots) {
    switch (slot.source) {
      case SlotSource::kInput: fixed_inputs = slot.index + 1; break;
      case SlotSource::kInputsFrom:
        fixed_inputs = slot.index;
        inputs_open = true;
        break;
      case SlotSource::kAttr: attr_count = slot.index + 1; break;
      case SlotSource::kOutputCount: break;
    }
  }
  if (inputs_open ? inputs.size() < fixed_inputs : inputs.size() != fixed_inputs) {
    throw UserError(fmt::format("{}: expected {}{} inputs, got {}", instruction_kind_name(kind),
                                inputs_open ? "at least " : "", fixed_inputs, inputs.size()));
  }
  if (attrs.size() != attr_count) {
    throw UserError(fmt::format("{}: expected {} attrs, got {}", instruction_kind_name(kind), attr_count, attrs.size()));
  }
}

const Arg& Operands::single(const SlotSignature& slot) const {
  // The counts were checked against the declaration: every input and attr slot is there.
  return slot.source == SlotSource::kAttr ? attrs_[slot.index] : inputs_[slot.index];
}

std::span<const Arg> Operands::elements(const SlotSignature& slot) const {
  if (slot.source == SlotSource::kInputsFrom) return std::span<const Arg>(inputs_).subspan(slot.index);
  return list(single(slot), slot.name);
}

const Arg::List& Operands::list(const Arg& a, std::string_view what) const {
  const auto* list = a.as<Arg::List>();
  if (list == nullptr) bad_value(kind_, fmt::format("a list for {}", what), a);
  return *list;
}

namespace {
RandomVar rv_of(InstructionKind kind, const Arg& a, RVType type) {
  const auto* rv = a.as<RandomVar>();
  if (rv == nullptr || rv->type != type) {
    bad_value(kind, type == RVType::kBlock ? "a block" : type == RVType::kLoop ? "a loop" : "an expression", a);
  }
  return *rv;
}
}  // namespace

template <>
Arg arg_as<Arg>(InstructionKind, const Arg& a) {
  return a;
}
template <>
BlockRV arg_as<BlockRV>(InstructionKind kind, const Arg& a) {
  return BlockRV{rv_of(kind, a, RVType::kBlock).id};
}
template <>
LoopRV arg_as<LoopRV>(InstructionKind kind, const Arg& a) {
  return LoopRV{rv_of(kind, a, RVType::kLoop).id};
}
template <>
ExprRV arg_as<ExprRV>(InstructionKind kind, const Arg& a) {
  return ExprRV{rv_of(kind, a, RVType::kExpr).id};
}
template <>
BlockOrLoop arg_as<BlockOrLoop>(InstructionKind kind, const Arg& a) {
  const auto* rv = a.as<RandomVar>();
  if (rv != nullptr && rv->type == RVType::kBlock) return BlockRV{rv->id};
  if (rv != nullptr && rv->type == RVType::kLoop) return LoopRV{rv->id};
  bad_value(kind, "a block or a loop", a);
}
template <>
int64_t arg_as<int64_t>(InstructionKind kind, const Arg& a) {
  if (const auto* v = a.as<int64_t>()) return *v;
  bad_value(kind, "an integer", a);
}
template <>
int arg_as<int>(InstructionKind kind, const Arg& a) {
  return static_cast<int>(arg_as<int64_t>(kind, a));
}
template <>
double arg_as<double>(InstructionKind kind, const Arg& a) {
  if (const auto* v = a.as<double>()) return *v;
  if (const auto* v = a.as<int64_t>()) return static_cast<double>(*v);
  bad_value(kind, "a number", a);
}
template <>
bool arg_as<bool>(InstructionKind kind, const Arg& a) {
  // TVM before v0.18 wrote bools as 0 and 1.
  if (const auto* v = a.as<bool>()) return *v;
  if (const auto* v = a.as<int64_t>(); v && (*v == 0 || *v == 1)) return *v == 1;
  bad_value(kind, "a bool", a);
}
template <>
std::string_view arg_as<std::string_view>(InstructionKind kind, const Arg& a) {
  if (const auto* v = a.as<std::string>()) return *v;
  bad_value(kind, "a string", a);
}
template <>
std::string arg_as<std::string>(InstructionKind kind, const Arg& a) {
  return std::string(arg_as<std::string_view>(kind, a));
}
template <>
SplitFactor arg_as<SplitFactor>(InstructionKind kind, const Arg& a) {
  if (a.is_none()) return None{};
  if (const auto* c = a.as<int64_t>()) return *c;
  return arg_as<ExprRV>(kind, a);
}
template <>
AnnotationInput arg_as<AnnotationInput>(InstructionKind kind, const Arg& a) {
  if (const auto* i = a.as<int64_t>()) return *i;
  if (const auto* d = a.as<double>()) return *d;
  if (const auto* s = a.as<std::string>()) return *s;
  if (const auto* b = a.as<bool>()) return int64_t{*b};
  return arg_as<ExprRV>(kind, a);
}

const Arg::List& list_arg(InstructionKind kind, const Arg& a) {
  if (const auto* v = a.as<Arg::List>()) return *v;
  bad_value(kind, "a list", a);
}

}  // namespace detail
}  // namespace dragon::schedule
