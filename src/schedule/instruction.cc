// Instruction kinds' names (from the .def table) and purity (from their declarations),
// and the spellings of arguments and instructions.
#include "dragon/schedule/instruction.h"

#include <array>

#include <fmt/format.h>

#include "dragon/schedule/instruction_signature.h"

namespace dragon::schedule {

namespace {

constexpr std::array<std::string_view, kNumInstructionKinds> kKindNames = {{
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) #Name,
#include "dragon/schedule/instruction_kinds.def"
}};

}  // namespace

char rv_prefix(RVType type) {
  switch (type) {
    case RVType::kBlock: return 'b';
    case RVType::kLoop: return 'l';
    case RVType::kExpr: return 'v';
  }
  return '?';
}

std::string rv_name(const RandomVar& rv) { return fmt::format("{}{}", rv_prefix(rv.type), rv.id); }

std::string_view instruction_kind_name(InstructionKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

bool instruction_kind_is_pure(InstructionKind kind) { return instruction_signature(kind).is_pure; }

std::optional<InstructionKind> parse_instruction_kind(std::string_view name) {
  // TVM renamed Block to SBlock in 2025 (GetSBlock, ...): read those as our spelling.
  std::string canonical(name);
  if (auto pos = canonical.find("SBlock"); pos != std::string::npos) canonical.replace(pos, 6, "Block");
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == canonical) return static_cast<InstructionKind>(i);
  }
  return std::nullopt;
}

Arg Arg::int_list(const std::vector<int64_t>& values) { return Arg(List(values.begin(), values.end())); }

Arg Arg::float_list(const std::vector<double>& values) { return Arg(List(values.begin(), values.end())); }

std::string to_string(const Arg& arg) {
  struct Printer {
    std::string operator()(None) const { return "None"; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const RandomVar& v) const { return rv_name(v); }
    std::string operator()(const Arg::List& v) const {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + to_string(v[i]);
      return out + "]";
    }
  };
  return std::visit(Printer{}, arg.value());
}

std::string to_string(const Instruction& inst) {
  std::string out;
  for (size_t i = 0; i < inst.outputs.size(); ++i) out += (i ? ", " : "") + rv_name(inst.outputs[i]);
  if (!inst.outputs.empty()) out += " = ";
  out += std::string(instruction_kind_name(inst.kind)) + "(";
  for (size_t i = 0; i < inst.inputs.size(); ++i) out += (i ? ", " : "") + to_string(inst.inputs[i]);
  if (!inst.attrs.empty()) {
    out += " |";
    for (const Arg& a : inst.attrs) out += " " + to_string(a);
  }
  return out + ")";
}

}  // namespace dragon::schedule
