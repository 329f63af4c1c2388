// docs/script-format.md's table of kinds, generated from the script schema (and so from
// the kinds' declarations): one row per kind, its operands as name:type with shape and
// default. Not the grammar's prose, which the doc keeps by hand.
#include <fmt/format.h>

#include "dragon/script/script_schema.h"

namespace dragon::script {

namespace {

std::string type_text(ValueType type) {
  switch (type) {
    case ValueType::kBlock: return "b";
    case ValueType::kLoop: return "l";
    case ValueType::kExpr: return "v";
    case ValueType::kBlockOrLoop: return "b/l";
    case ValueType::kInt: return "int";
    case ValueType::kFloat: return "float";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "str";
    case ValueType::kEnum: return "enum";
    case ValueType::kSplitFactor: return "int/v/None";
    case ValueType::kAnnValue: return "int/float/bool/str/v";
    case ValueType::kCount: return "count";
    case ValueType::kOptionalNumber: return "None/number";
  }
  return "?";
}

std::string rv_text(schedule::RVType type) { return std::string(1, schedule::rv_prefix(type)); }

std::string slot_text(const SlotSchema& slot) {
  if (slot.source == SlotSource::kOutputCount) return std::string(slot.name);
  std::string type = type_text(slot.type);
  switch (slot.shape) {
    case SlotShape::kSingle: break;
    case SlotShape::kList: type = "[" + type + "]"; break;
    case SlotShape::kRest: type = (type.find('/') == std::string::npos ? type : "(" + type + ")") + "*"; break;
  }
  std::string text = fmt::format("{}:{}", slot.name, type);
  switch (slot.default_kind) {
    case DefaultKind::kRequired:
    case DefaultKind::kEmpty: break;
    case DefaultKind::kValue: {
      const schedule::Arg& d = slot.default_value;
      text += "=" + (d.as<std::string>() ? *d.as<std::string>() : schedule::to_string(d));
      break;
    }
    case DefaultKind::kUniformProbs: text += "=uniform"; break;
  }
  return text;
}

std::string outputs_text(const KindSchema& kind) {
  const OutputSchema& out = kind.outputs;
  const std::string rv = rv_text(out.type);
  switch (out.rule) {
    case OutputRule::kFixed: return out.fixed_count == 0 ? "0" : fmt::format("{} {}", out.fixed_count, rv);
    case OutputRule::kFromSlot:
    case OutputRule::kWritten: return fmt::format("{} {}", kind.slots[out.slot].name, rv);
    case OutputRule::kListLength: return fmt::format("one {} per {}", rv, kind.slots[out.slot].name);
  }
  return "?";
}

std::string decision_text(DecisionShape shape) {
  switch (shape) {
    case DecisionShape::kNone: return "";
    case DecisionShape::kInt: return "int";
    case DecisionShape::kIntList: return "ints";
  }
  return "?";
}

}  // namespace

std::string kinds_markdown_table() {
  std::string out =
      "| kind | mnemonic | operands (in order; `=` default) | outputs | decision |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const KindSchema& kind : all_kind_schemas()) {
    std::string operands;
    for (const SlotSchema& slot : kind.slots) operands += (operands.empty() ? "" : ", ") + slot_text(slot);
    out += "|";
    for (const std::string& cell : {std::string(schedule::instruction_kind_name(kind.kind)),
                                    fmt::format("`{}`", kind.mnemonic), operands, outputs_text(kind),
                                    decision_text(kind.decision)}) {
      out += cell.empty() ? " |" : " " + cell + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace dragon::script
