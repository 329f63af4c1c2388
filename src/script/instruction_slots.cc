// Reading an Instruction's inputs and attrs slot by slot (instruction_slots.h).
#include "instruction_slots.h"

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::script::detail {

using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;

void fail_instruction(size_t index, InstructionKind kind, const std::string& message) {
  throw UserError(fmt::format("cannot write instruction {} ({}) as a script: {}", index,
                              schedule::instruction_kind_name(kind), message));
}

std::vector<std::vector<Arg>> slot_values(const Instruction& inst, const KindSchema& schema, size_t index) {
  auto fail = [&](const std::string& message) { fail_instruction(index, inst.kind, message); };
  std::vector<std::vector<Arg>> values;
  size_t inputs_covered = 0, attrs_covered = 0;
  bool inputs_open = false;
  for (const SlotSchema& slot : schema.slots) {
    const std::vector<Arg>& from = slot.source == SlotSource::kAttr ? inst.attrs : inst.inputs;
    const char* where = slot.source == SlotSource::kAttr ? "attr" : "input";
    switch (slot.source) {
      case SlotSource::kOutputCount:
        values.push_back({Arg(static_cast<int64_t>(inst.outputs.size()))});
        continue;
      case SlotSource::kInputsFrom:
        if (slot.index > static_cast<int>(from.size())) fail(fmt::format("too few inputs for {}", slot.name));
        values.emplace_back(from.begin() + slot.index, from.end());
        inputs_open = true;
        continue;
      case SlotSource::kInput: inputs_covered = slot.index + 1; break;
      case SlotSource::kAttr: attrs_covered = slot.index + 1; break;
    }
    if (slot.index >= static_cast<int>(from.size())) {
      fail(fmt::format("{} {} ({}) is missing", where, slot.index, slot.name));
    }
    const Arg& a = from[slot.index];
    if (slot.shape == SlotShape::kSingle) {
      values.push_back({a});
      continue;
    }
    const auto* list = a.as<Arg::List>();
    if (list == nullptr) fail(fmt::format("{} {} ({}) is not a list", where, slot.index, slot.name));
    values.push_back(*list);
  }
  if (!inputs_open && inst.inputs.size() != inputs_covered) {
    fail(fmt::format("{} inputs, the kind takes {}", inst.inputs.size(), inputs_covered));
  }
  if (inst.attrs.size() != attrs_covered) {
    fail(fmt::format("{} attrs, the kind takes {}", inst.attrs.size(), attrs_covered));
  }
  return values;
}

}  // namespace dragon::script::detail
