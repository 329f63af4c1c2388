// The compact script's schema: per instruction kind its mnemonic and its declaration's
// operand slots (instruction_signature.h: written order, value type, shape, where each
// lives in the Instruction, default), output rule and decision shape, with the short
// names the script writes for well-known strings. Derived, once, from
// instruction_kinds.def and the kinds' declarations; the script adds only its spelling.
// Public so the tokenizer and the constrained decoder read the very table the codec
// uses. Not the codec (script.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/schedule/instruction_signature.h"
#include "dragon/schedule/random_var.h"

namespace dragon::script {

// The declaration's vocabulary, as the script reads it (instruction_signature.h).
using schedule::DecisionShape;
using schedule::DefaultKind;
using schedule::OutputRule;
using schedule::SlotShape;
using schedule::SlotSource;
using schedule::ValueType;
using OutputSchema = schedule::OutputSignature;

// A short name written for a well-known string: "tx" for "threadIdx.x".
struct ShortName {
  std::string_view code;
  std::string_view full;
};

// A slot as the script reads and writes it: its declaration, the default as an Arg and
// the short names of its vocabulary.
struct SlotSchema : schedule::SlotSignature {
  schedule::Arg default_value;       // kValue: default_constant as an Arg
  std::span<const ShortName> names;  // code -> full string, for its vocabulary
};

struct KindSchema {
  schedule::InstructionKind kind;
  std::string_view mnemonic;     // "sp"; letters only, unique (instruction_kinds.def)
  std::string_view python_name;  // TVM's method: "split"
  std::vector<SlotSchema> slots;
  OutputSchema outputs;
  DecisionShape decision = DecisionShape::kNone;
  // For kIntList: the slot whose integer the decision's length should equal (-1: none).
  // Advisory (replay checks it); the codec writes whatever length the trace holds.
  int decision_length_slot = -1;
};

// The schema of `kind`; every kind of instruction_kinds.def has one.
const KindSchema& kind_schema(schedule::InstructionKind kind);
// The kind written `mnemonic`, if any.
const KindSchema* find_mnemonic(std::string_view mnemonic);
// Every kind's schema, in InstructionKind order.
std::span<const KindSchema> all_kind_schemas();

// The short-name tables used by slots (also reachable through SlotSchema::names).
std::span<const ShortName> thread_axis_names();
std::span<const ShortName> storage_scope_names();
std::span<const ShortName> annotation_key_names();

// The table of kinds of docs/script-format.md ("### Kinds"), in Markdown, generated from
// this schema: `dragon script kinds` prints it and a test checks the doc against it.
std::string kinds_markdown_table();

// Lexical helpers shared by the codec and the constrained decoder.
// A word that may be written bare: [A-Za-z_][A-Za-z0-9_.]*, and not true/false/None nor
// an RV name ([blv] followed by digits).
bool is_bare_word(std::string_view s);
// "b3", "l0", "v12" -> its type and per-type index; nullopt otherwise (no leading zeros).
std::optional<std::pair<schedule::RVType, int64_t>> parse_rv_name(std::string_view s);

}  // namespace dragon::script
