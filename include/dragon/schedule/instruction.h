// Instructions of a trace: a kind from instruction_kinds.def, inputs (random variables,
// numbers, strings, None, nested lists), compile-time attrs and output random variables.
// Plain data; each kind's layout and replay are its declaration's
// (instruction_signature.h), defined beside its primitive (src/schedule/primitive/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dragon/schedule/random_var.h"

namespace dragon::schedule {

enum class InstructionKind : uint8_t {
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) Name,
#include "dragon/schedule/instruction_kinds.def"
};

inline constexpr int kNumInstructionKinds = 0
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) +1
#include "dragon/schedule/instruction_kinds.def"
    ;

// "Split", "GetBlock", ...: the spelling in traces.
std::string_view instruction_kind_name(InstructionKind kind);
// Whether the kind only looks things up or samples (its declaration's is_pure).
bool instruction_kind_is_pure(InstructionKind kind);
// The kind spelled `name`; TVM's newer spellings (GetSBlock, ...) are accepted as aliases.
std::optional<InstructionKind> parse_instruction_kind(std::string_view name);

// The null input (an inferred split factor); spelled "None" in JSON.
struct None {
  friend bool operator==(const None&, const None&) = default;
};

// One input, attr or decision value. Bools appear only in attrs.
class Arg {
 public:
  using List = std::vector<Arg>;
  using Value = std::variant<None, bool, int64_t, double, std::string, RandomVar, List>;

  Arg() = default;
  Arg(None) {}                                            // NOLINT(google-explicit-constructor)
  Arg(bool v) : value_(v) {}                              // NOLINT(google-explicit-constructor)
  Arg(int v) : value_(int64_t{v}) {}                      // NOLINT(google-explicit-constructor)
  Arg(int64_t v) : value_(v) {}                           // NOLINT(google-explicit-constructor)
  Arg(double v) : value_(v) {}                            // NOLINT(google-explicit-constructor)
  Arg(std::string v) : value_(std::move(v)) {}            // NOLINT(google-explicit-constructor)
  Arg(const char* v) : value_(std::string(v)) {}          // NOLINT(google-explicit-constructor)
  Arg(RandomVar v) : value_(v) {}                         // NOLINT(google-explicit-constructor)
  Arg(BlockRV v) : value_(RandomVar(v)) {}                // NOLINT(google-explicit-constructor)
  Arg(LoopRV v) : value_(RandomVar(v)) {}                 // NOLINT(google-explicit-constructor)
  Arg(ExprRV v) : value_(RandomVar(v)) {}                 // NOLINT(google-explicit-constructor)
  Arg(List v) : value_(std::move(v)) {}                   // NOLINT(google-explicit-constructor)
  static Arg int_list(const std::vector<int64_t>& values);
  static Arg float_list(const std::vector<double>& values);

  const Value& value() const { return value_; }
  bool is_none() const { return std::holds_alternative<None>(value_); }
  template <typename T>
  bool is() const { return std::holds_alternative<T>(value_); }
  template <typename T>
  const T* as() const { return std::get_if<T>(&value_); }
  // The integer held, or `fallback` for any other value.
  int64_t int_or(int64_t fallback) const {
    const int64_t* v = as<int64_t>();
    return v != nullptr ? *v : fallback;
  }

  friend bool operator==(const Arg&, const Arg&) = default;

 private:
  Value value_;
};

// "[8, 1, 16]", "b0", "\"SSRS\"", "None": a readable spelling for messages and tests.
std::string to_string(const Arg& arg);

struct Instruction {
  InstructionKind kind = InstructionKind::EnterPostproc;
  std::vector<Arg> inputs;
  std::vector<Arg> attrs;
  std::vector<RandomVar> outputs;
  friend bool operator==(const Instruction&, const Instruction&) = default;
};

// One line of text: "l2, l3 = Split(l1, None, 8 | true)" (decision appended by Trace).
std::string to_string(const Instruction& inst);

}  // namespace dragon::schedule
