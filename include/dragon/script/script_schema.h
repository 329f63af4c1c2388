// The compact script's schema: per instruction kind its mnemonic, its operand slots in
// written order (value type, shape, where the value lives in the Instruction, default),
// how its output count is known and its decision's shape. Generated per kind of
// instruction_kinds.def (a kind without a row is a -Wswitch warning and fails at start-up).
// Public so the tokenizer and the constrained decoder read the very table the codec
// uses. Not the codec (script.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/schedule/random_var.h"

namespace dragon::script {

// What one written value is. Lexical classes (docs/script-format.md, "Grammar"):
// RV names b<k> l<k> v<k>; numbers; the words true, false, None; bare words; quoted strings.
enum class ValueType : uint8_t {
  kBlock,        // a BlockRV: b<k>
  kLoop,         // a LoopRV: l<k>
  kExpr,         // an ExprRV: v<k>
  kBlockOrLoop,  // b<k> or l<k>
  kInt,          // an integer: 0, 16, -1
  kFloat,        // a number; an integer literal stays an integer Arg, a float has '.' or 'e'
  kBool,         // true | false
  kString,       // any string: a bare word or a quoted string; `names` lists short names
  kEnum,         // a string from `names` (short name written); others only quoted, and
                 // replay rejects them (the codec stays lossless)
  kSplitFactor,  // kInt | kExpr | None
  kAnnValue,     // kInt | kFloat | kBool | kString | kExpr (an annotation's value)
  kCount,        // the number of outputs, an integer >= 0 (kinds whose count is written)
  kOptionalNumber,  // None | kInt | kFloat (TransformLayout's pad_value)
};

// How many values a slot holds and how they are written.
enum class SlotShape : uint8_t {
  kSingle,  // one value
  kList,    // [v v v]: brackets, single spaces, possibly empty []
  kRest,    // v v v: bare, as many as follow; its default is always the empty list.
            // Only the last slot of a kind, or followed only by slots whose values
            // cannot be mistaken for its elements (Split's bools after its factors).
};

// Where a slot's value lives in the Instruction.
enum class SlotSource : uint8_t {
  kInput,        // inputs[index] (kList: inputs[index] holds an Arg::List)
  kInputsFrom,   // inputs[index], inputs[index+1], ... to the end, flattened (kRest)
  kAttr,         // attrs[index] (kList: attrs[index] holds an Arg::List)
  kOutputCount,  // stored nowhere: the number of outputs (type kCount)
};

enum class DefaultKind : uint8_t {
  kRequired,      // always written
  kValue,         // `default_value`
  kEmpty,         // the empty list (every kRest slot)
  kUniformProbs,  // n copies of the double 1.0 / n, n the length of the previous slot
};

// A short name written for a well-known string: "tx" for "threadIdx.x".
struct ShortName {
  std::string_view code;
  std::string_view full;
};

struct SlotSchema {
  std::string_view name;  // TVM's Python keyword: "loop", "factors", "preserve_unit_iters"
  ValueType type;
  SlotShape shape = SlotShape::kSingle;
  SlotSource source = SlotSource::kInput;
  int index = 0;  // into inputs or attrs; unused for kOutputCount
  DefaultKind default_kind = DefaultKind::kRequired;
  schedule::Arg default_value;        // for kValue
  std::span<const ShortName> names;   // kString / kEnum: short names, code -> full string
};

// How the number of outputs is known from the line.
enum class OutputRule : uint8_t {
  kFixed,       // always `fixed_count` (0 or 1)
  kFromSlot,    // the integer value of slot `slot` (SamplePerfectTile's n)
  kListLength,  // the number of values in slot `slot` (Split: one loop per factor)
  kWritten,     // the kCount slot `slot` (GetLoops, GetChildBlocks, GetProducers, GetConsumers)
};

struct OutputSchema {
  OutputRule rule = OutputRule::kFixed;
  int fixed_count = 0;
  int slot = -1;
  schedule::RVType type = schedule::RVType::kBlock;  // every output of a kind has this type
};

// The shape of a sampling instruction's decision, written after " = " at the line's end.
enum class DecisionShape : uint8_t {
  kNone,     // the kind takes no decision
  kInt,      // one integer (SampleCategorical: an index; SampleComputeLocation)
  kIntList,  // integers to the end of the line, bare (SamplePerfectTile: one per output)
};

struct KindSchema {
  schedule::InstructionKind kind;
  std::string_view mnemonic;     // "sp"; letters only, unique
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

// Lexical helpers shared by the codec and the constrained decoder.
// A word that may be written bare: [A-Za-z_][A-Za-z0-9_.]*, and not true/false/None nor
// an RV name ([blv] followed by digits).
bool is_bare_word(std::string_view s);
// "b3", "l0", "v12" -> its type and per-type index; nullopt otherwise (no leading zeros).
std::optional<std::pair<schedule::RVType, int64_t>> parse_rv_name(std::string_view s);

}  // namespace dragon::script
