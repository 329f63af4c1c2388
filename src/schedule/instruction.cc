// Instruction kinds (names, purity, replay dispatch, all generated from the .def table),
// argument spellings, and the argument helpers replay functions use.
#include "dragon/schedule/instruction.h"

#include <array>

#include <fmt/format.h>

#include "instruction_apply.h"

namespace dragon::schedule {

namespace {

struct KindInfo {
  std::string_view name;
  bool is_pure;
  detail::ApplyFn apply;
};

constexpr std::array<KindInfo, kNumInstructionKinds> kKinds = {{
#define DRAGON_INSTRUCTION_KIND(Name, is_pure, apply) {#Name, is_pure, &detail::apply},
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

std::string_view instruction_kind_name(InstructionKind kind) { return kKinds[static_cast<size_t>(kind)].name; }

bool instruction_kind_is_pure(InstructionKind kind) { return kKinds[static_cast<size_t>(kind)].is_pure; }

std::optional<InstructionKind> parse_instruction_kind(std::string_view name) {
  // TVM renamed Block to SBlock in 2025 (GetSBlock, ...): read those as our spelling.
  std::string canonical(name);
  if (auto pos = canonical.find("SBlock"); pos != std::string::npos) canonical.replace(pos, 6, "Block");
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (kKinds[i].name == canonical) return static_cast<InstructionKind>(i);
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

namespace detail {

ApplyFn apply_function(InstructionKind kind) { return kKinds[static_cast<size_t>(kind)].apply; }

std::vector<RandomVar> apply_unimplemented(Schedule&, const std::vector<Arg>&, const std::vector<Arg>&,
                                           const std::optional<Arg>&) {
  throw UserError("this build cannot replay the instruction: its primitive is not implemented yet");
}

namespace {
[[noreturn]] void bad_arg(InstructionKind kind, std::string_view expected, const Arg& arg) {
  throw UserError(fmt::format("{}: expected {}, got {}", instruction_kind_name(kind), expected, to_string(arg)));
}
}  // namespace

void expect_count(InstructionKind kind, std::string_view what, const std::vector<Arg>& args, size_t n) {
  if (args.size() != n) {
    throw UserError(fmt::format("{}: expected {} {}, got {}", instruction_kind_name(kind), n, what, args.size()));
  }
}

RandomVar rv_arg(InstructionKind kind, const Arg& arg, RVType type) {
  const auto* rv = arg.as<RandomVar>();
  if (rv == nullptr || rv->type != type) {
    bad_arg(kind, type == RVType::kBlock ? "a block" : type == RVType::kLoop ? "a loop" : "an expression", arg);
  }
  return *rv;
}

BlockRV block_arg(InstructionKind kind, const Arg& arg) { return BlockRV{rv_arg(kind, arg, RVType::kBlock).id}; }

LoopRV loop_arg(InstructionKind kind, const Arg& arg) { return LoopRV{rv_arg(kind, arg, RVType::kLoop).id}; }

BlockOrLoop block_or_loop_arg(InstructionKind kind, const Arg& arg) {
  const auto* rv = arg.as<RandomVar>();
  if (rv != nullptr && rv->type == RVType::kBlock) return BlockRV{rv->id};
  if (rv != nullptr && rv->type == RVType::kLoop) return LoopRV{rv->id};
  bad_arg(kind, "a block or a loop", arg);
}

int64_t int_arg(InstructionKind kind, const Arg& arg) {
  if (const auto* v = arg.as<int64_t>()) return *v;
  bad_arg(kind, "an integer", arg);
}

double float_arg(InstructionKind kind, const Arg& arg) {
  if (const auto* v = arg.as<double>()) return *v;
  if (const auto* v = arg.as<int64_t>()) return static_cast<double>(*v);
  bad_arg(kind, "a number", arg);
}

bool bool_arg(InstructionKind kind, const Arg& arg) {
  if (const auto* v = arg.as<bool>()) return *v;
  if (const auto* v = arg.as<int64_t>(); v && (*v == 0 || *v == 1)) return *v == 1;
  bad_arg(kind, "a bool", arg);
}

const std::string& string_arg(InstructionKind kind, const Arg& arg) {
  if (const auto* v = arg.as<std::string>()) return *v;
  bad_arg(kind, "a string", arg);
}

std::vector<int64_t> int_list_arg(InstructionKind kind, const Arg& arg) {
  const auto* list = arg.as<Arg::List>();
  if (list == nullptr) bad_arg(kind, "a list of integers", arg);
  std::vector<int64_t> out;
  for (const Arg& a : *list) out.push_back(int_arg(kind, a));
  return out;
}

std::vector<double> float_list_arg(InstructionKind kind, const Arg& arg) {
  const auto* list = arg.as<Arg::List>();
  if (list == nullptr) bad_arg(kind, "a list of numbers", arg);
  std::vector<double> out;
  for (const Arg& a : *list) out.push_back(float_arg(kind, a));
  return out;
}

}  // namespace detail
}  // namespace dragon::schedule
