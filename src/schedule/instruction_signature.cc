// The table of kind declarations (generated from instruction_kinds.def; each declaration
// is defined beside its primitive), their consistency checks, and what derives from a
// declaration alone: defaults as Args, value-type checks, the pinned TVM dialect.
#include "dragon/schedule/instruction_signature.h"

#include <array>

#include <fmt/format.h>

#include "instruction_apply.h"

namespace dragon::schedule {

namespace {

constexpr std::array<const InstructionSignature*, kNumInstructionKinds> kSignatures = {{
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) &detail::k##Name##Signature,
#include "dragon/schedule/instruction_kinds.def"
}};

}  // namespace

const InstructionSignature& instruction_signature(InstructionKind kind) {
  return *kSignatures[static_cast<size_t>(kind)];
}

Arg default_arg(const SlotSignature& slot) {
  return std::visit(
      [](const auto& v) -> Arg {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string_view>) {
          return Arg(std::string(v));
        } else {
          return Arg(v);
        }
      },
      slot.default_constant);
}

bool fits_value_type(const Arg& a, ValueType type) {
  if (const auto* rv = a.as<RandomVar>()) {
    switch (type) {
      case ValueType::kBlock: return rv->type == RVType::kBlock;
      case ValueType::kLoop: return rv->type == RVType::kLoop;
      case ValueType::kBlockOrLoop: return rv->type != RVType::kExpr;
      case ValueType::kExpr:
      case ValueType::kSplitFactor:
      case ValueType::kAnnValue: return rv->type == RVType::kExpr;
      default: return false;
    }
  }
  switch (type) {
    case ValueType::kInt:
    case ValueType::kCount: return a.is<int64_t>();
    case ValueType::kFloat: return a.is<int64_t>() || a.is<double>();
    case ValueType::kBool: return a.is<bool>();
    case ValueType::kString:
    case ValueType::kEnum: return a.is<std::string>();
    case ValueType::kSplitFactor: return a.is<int64_t>() || a.is_none();
    case ValueType::kOptionalNumber: return a.is<int64_t>() || a.is<double>() || a.is_none();
    case ValueType::kAnnValue: return a.is<int64_t>() || a.is<double>() || a.is<bool>() || a.is<std::string>();
    default: return false;
  }
}

Instruction in_pinned_dialect(Instruction inst) {
  const InstructionSignature& sig = instruction_signature(inst.kind);
  if (sig.upgrade != nullptr) {
    if (std::optional<Instruction> upgraded = sig.upgrade(inst.inputs, inst.attrs)) {
      upgraded->outputs = std::move(inst.outputs);
      inst = std::move(*upgraded);
    }
  }
  for (const SlotSignature& slot : sig.slots) {
    if (slot.type != ValueType::kBool || slot.source != SlotSource::kAttr) continue;
    if (slot.index >= static_cast<int>(inst.attrs.size())) continue;
    Arg& a = inst.attrs[slot.index];
    if (const auto* i = a.as<int64_t>(); i && (*i == 0 || *i == 1)) a = Arg(*i == 1);
  }
  return inst;
}

std::string signature_problem(InstructionKind kind) {
  const InstructionSignature& s = instruction_signature(kind);
  const std::span<const SlotSignature> slots = s.slots;
  if (s.python_name.empty()) return "no Python name";
  if (s.replay == nullptr) return "no replay function";
  bool seen_default = false;
  int inputs = 0, attrs = 0;
  bool inputs_open = false;
  for (const SlotSignature& slot : slots) {
    if (slot.shape != SlotShape::kRest) {
      const bool has_default = slot.default_kind != DefaultKind::kRequired;
      if (seen_default && !has_default) return fmt::format("required slot {} follows a defaulted one", slot.name);
      seen_default |= has_default;
    } else if (slot.default_kind != DefaultKind::kEmpty) {
      return fmt::format("rest slot {} does not default to the empty list", slot.name);
    }
    if ((slot.source == SlotSource::kOutputCount) != (slot.type == ValueType::kCount)) {
      return fmt::format("slot {}: only output counts have type kCount", slot.name);
    }
    if (slot.source == SlotSource::kInputsFrom && slot.shape != SlotShape::kRest) {
      return fmt::format("slot {} takes the remaining inputs but is not a rest", slot.name);
    }
    if (slot.default_kind == DefaultKind::kUniformProbs && (&slot == slots.data() || slot.shape != SlotShape::kList)) {
      return fmt::format("slot {}: uniform probabilities need a list after another list", slot.name);
    }
    if (slot.default_kind == DefaultKind::kValue && !fits_value_type(default_arg(slot), slot.type)) {
      return fmt::format("slot {}: the default is not of the slot's type", slot.name);
    }
    switch (slot.source) {
      case SlotSource::kAttr:
        if (slot.index != attrs++) return fmt::format("attr slot {} is out of order", slot.name);
        break;
      case SlotSource::kInput:
      case SlotSource::kInputsFrom:
        if (inputs_open || slot.index != inputs++) return fmt::format("input slot {} is out of order", slot.name);
        inputs_open = slot.source == SlotSource::kInputsFrom;
        break;
      case SlotSource::kOutputCount: break;
    }
  }
  const OutputSignature& out = s.outputs;
  const int n = static_cast<int>(slots.size());
  switch (out.rule) {
    case OutputRule::kFixed:
      if (out.fixed_count < 0 || out.fixed_count > 1) return "a fixed output count other than 0 or 1";
      break;
    case OutputRule::kFromSlot:
      if (out.slot < 0 || out.slot >= n || slots[out.slot].type != ValueType::kInt ||
          slots[out.slot].shape != SlotShape::kSingle) {
        return "the output count's slot is not one integer";
      }
      break;
    case OutputRule::kListLength:
      if (out.slot < 0 || out.slot >= n || slots[out.slot].shape == SlotShape::kSingle) {
        return "the outputs' slot is not a list or rest";
      }
      break;
    case OutputRule::kWritten:
      if (out.slot < 0 || out.slot >= n || slots[out.slot].source != SlotSource::kOutputCount) {
        return "the written output count is not an output-count slot";
      }
      break;
  }
  for (const SlotSignature& slot : slots) {
    if (slot.source == SlotSource::kOutputCount && !(out.rule == OutputRule::kWritten && &slot == &slots[out.slot])) {
      return fmt::format("output-count slot {} is not the kind's written count", slot.name);
    }
  }
  if (s.decision_length_slot >= n || (s.decision_length_slot >= 0 && s.decision != DecisionShape::kIntList)) {
    return "the decision's length slot does not fit its decision";
  }
  return {};
}

}  // namespace dragon::schedule
