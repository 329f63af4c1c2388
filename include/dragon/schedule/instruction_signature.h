// The declaration of one instruction kind: its operand slots in written order (value
// type, shape, where each lives in an Instruction, default), its outputs, its decision,
// its purity and its replay. One per kind, defined beside its primitive
// (src/schedule/primitive/) and named by the kind's row of instruction_kinds.def;
// recording, replay, the compact script's schema and docs/script-format.md's table of
// kinds all derive from it. Not the script's spelling (mnemonics, short names: script/).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/schedule/random_var.h"

namespace dragon::schedule {

class Schedule;
struct CheckResult;
namespace detail {
class CheckedOperands;
class Operands;
}

// What one operand value is. In the compact script (docs/script-format.md, "Grammar"):
// RV names b<k> l<k> v<k>; numbers; the words true, false, None; bare words; quoted strings.
enum class ValueType : uint8_t {
  kBlock,        // a BlockRV: b<k>
  kLoop,         // a LoopRV: l<k>
  kExpr,         // an ExprRV: v<k>
  kBlockOrLoop,  // b<k> or l<k>
  kInt,          // an integer: 0, 16, -1
  kFloat,        // a number; an integer stays an integer Arg, a float has '.' or 'e'
  kBool,         // true | false
  kString,       // any string; a vocabulary, if any, only gives short names
  kEnum,         // a string of the slot's vocabulary; others stay representable (the
                 // script quotes them) and replay rejects them
  kSplitFactor,  // kInt | kExpr | None
  kAnnValue,     // kInt | kFloat | kBool | kString | kExpr (an annotation's value)
  kCount,        // the number of outputs, an integer >= 0 (kinds whose count is written)
  kOptionalNumber,  // None | kInt | kFloat (TransformLayout's pad_value)
};

// How many values a slot holds and how they are written.
enum class SlotShape : uint8_t {
  kSingle,  // one value
  kList,    // [v v v]: brackets, possibly empty []
  kRest,    // v v v: bare, as many as follow; its default is always the empty list.
            // Only the last slot of a kind, or followed only by slots whose values
            // cannot be mistaken for its elements (Split's bools after its factors).
};

// Where a slot's value lives in the Instruction.
enum class SlotSource : uint8_t {
  kInput,        // inputs[index] (a list or rest: inputs[index] holds an Arg::List)
  kInputsFrom,   // inputs[index], inputs[index+1], ... to the end, flattened (kRest)
  kAttr,         // attrs[index] (a list: attrs[index] holds an Arg::List)
  kOutputCount,  // stored nowhere: the number of outputs (type kCount)
};

enum class DefaultKind : uint8_t {
  kRequired,      // always written
  kValue,         // `default_constant`
  kEmpty,         // the empty list (every kRest slot)
  kUniformProbs,  // n copies of the double 1.0 / n, n the length of the previous slot
};

// The closed or well-known sets of strings a string slot takes; the script gives their
// members short names (script_schema.h).
enum class Vocabulary : uint8_t {
  kNone,
  kThreadAxis,     // blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z (Bind)
  kStorageScope,   // global, shared, shared.dyn, local, warp, wmma.* (caches, SetScope)
  kAnnotationKey,  // MetaSchedule's annotation keys and the lowering pragmas
};

// A kValue default. A constant (Arg is not a literal type); default_arg() gives the Arg.
using SlotDefault = std::variant<None, bool, int64_t, std::string_view>;

struct SlotSignature {
  std::string_view name = {};  // TVM's Python keyword: "loop", "factors", "preserve_unit_iters"
  ValueType type = ValueType::kInt;
  SlotShape shape = SlotShape::kSingle;
  SlotSource source = SlotSource::kInput;
  int index = 0;  // into inputs or attrs (numbered_slots counts them); unused for kOutputCount
  DefaultKind default_kind = DefaultKind::kRequired;
  SlotDefault default_constant = None{};
  Vocabulary vocabulary = Vocabulary::kNone;

  constexpr SlotSignature defaults_to(SlotDefault value) const {
    SlotSignature s = *this;
    s.default_kind = DefaultKind::kValue;
    s.default_constant = value;
    return s;
  }
  constexpr SlotSignature defaults_to_uniform_probs() const {
    SlotSignature s = *this;
    s.default_kind = DefaultKind::kUniformProbs;
    return s;
  }
  constexpr SlotSignature of(Vocabulary v) const {
    SlotSignature s = *this;
    s.vocabulary = v;
    return s;
  }
};

// The default of a kValue slot as an Arg.
Arg default_arg(const SlotSignature& slot);

// Slot builders, in the order the primitive's Python signature lists its operands; the
// indices into inputs and attrs are counted by numbered_slots.
namespace slot {
constexpr SlotSignature input(std::string_view name, ValueType type) {
  return SlotSignature{.name = name, .type = type};
}
constexpr SlotSignature attr(std::string_view name, ValueType type) {
  return SlotSignature{.name = name, .type = type, .source = SlotSource::kAttr};
}
// A bracketed list held by one attr (SampleCategorical's candidates) or one input.
constexpr SlotSignature list_attr(std::string_view name, ValueType element) {
  return SlotSignature{.name = name, .type = element, .shape = SlotShape::kList, .source = SlotSource::kAttr};
}
constexpr SlotSignature list_input(std::string_view name, ValueType element) {
  return SlotSignature{.name = name, .type = element, .shape = SlotShape::kList};
}
// The remaining inputs, flattened (Split's factors, Fuse's loops).
constexpr SlotSignature rest_of_inputs(std::string_view name, ValueType element) {
  return SlotSignature{.name = name, .type = element, .shape = SlotShape::kRest, .source = SlotSource::kInputsFrom,
                       .default_kind = DefaultKind::kEmpty};
}
// A rest written bare but stored as one nested list input (CacheRead's consumers).
constexpr SlotSignature rest_in_list_input(std::string_view name, ValueType element) {
  return SlotSignature{.name = name, .type = element, .shape = SlotShape::kRest, .default_kind = DefaultKind::kEmpty};
}
// The number of outputs, written where the IR decides it (GetLoops).
constexpr SlotSignature output_count() {
  return SlotSignature{.name = "count", .type = ValueType::kCount, .source = SlotSource::kOutputCount};
}
}  // namespace slot

// `slots` with their indices into inputs and attrs: each input or attr slot takes the
// next free index of its source, in written order.
template <size_t N>
constexpr std::array<SlotSignature, N> numbered_slots(const SlotSignature (&slots)[N]) {
  std::array<SlotSignature, N> out{};
  int inputs = 0, attrs = 0;
  for (size_t i = 0; i < N; ++i) {
    out[i] = slots[i];
    switch (slots[i].source) {
      case SlotSource::kInput:
      case SlotSource::kInputsFrom: out[i].index = inputs++; break;
      case SlotSource::kAttr: out[i].index = attrs++; break;
      case SlotSource::kOutputCount: out[i].index = 0; break;
    }
  }
  return out;
}

// How the number of outputs follows from the operands.
enum class OutputRule : uint8_t {
  kFixed,       // always `fixed_count` (0 or 1)
  kFromSlot,    // the integer value of slot `slot` (SamplePerfectTile's n)
  kListLength,  // the number of values in slot `slot` (Split: one loop per factor)
  kWritten,     // the kCount slot `slot` (GetLoops, GetChildBlocks, GetProducers, ...)
};

struct OutputSignature {
  OutputRule rule = OutputRule::kFixed;
  int fixed_count = 0;
  int slot = -1;
  RVType type = RVType::kBlock;  // every output of a kind has this type

  static constexpr OutputSignature none() { return {}; }
  static constexpr OutputSignature one(RVType type) { return {OutputRule::kFixed, 1, -1, type}; }
  static constexpr OutputSignature per_value_of(int slot, RVType type) {
    return {OutputRule::kListLength, 0, slot, type};
  }
  static constexpr OutputSignature value_of(int slot, RVType type) { return {OutputRule::kFromSlot, 0, slot, type}; }
  static constexpr OutputSignature written(int slot, RVType type) { return {OutputRule::kWritten, 0, slot, type}; }
};

// The shape of a sampling instruction's decision.
enum class DecisionShape : uint8_t {
  kNone,     // the kind takes no decision
  kInt,      // one integer (SampleCategorical: an index; SampleComputeLocation)
  kIntList,  // a list of integers (SamplePerfectTile: one per output)
};

// Replays one instruction: the operands refer to `sch`'s random variables; returns the
// outputs in order. Malformed operands throw UserError.
using ReplayFn = std::vector<RandomVar> (*)(Schedule& sch, const detail::Operands& operands);
// An instruction of this kind in an older TVM layout, rewritten to the pinned one (TVM
// v0.18); nullopt when `inputs` and `attrs` are in the pinned layout already.
using UpgradeFn = std::optional<Instruction> (*)(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs);
// Schedule::check of the kind: reads the operands it is told (CheckedOperands) and runs the
// primitive's plan, its preconditions, without building anything (check.h).
using CheckFn = CheckResult (*)(const Schedule& sch, const detail::CheckedOperands& operands,
                                const std::optional<Arg>& decision);

struct InstructionSignature {
  std::string_view python_name = {};  // TVM's method: "split"
  bool is_pure = false;          // only looks up or samples: Trace::simplified() may drop it
  std::span<const SlotSignature> slots = {};
  OutputSignature outputs = OutputSignature::none();
  DecisionShape decision = DecisionShape::kNone;
  // For kIntList: the slot whose integer the decision's length should equal (-1: none).
  // Advisory: replay repairs or rejects other lengths.
  int decision_length_slot = -1;
  ReplayFn replay = nullptr;
  UpgradeFn upgrade = nullptr;  // for kinds whose layout changed across TVM versions
  // Without one, check() answers kUnknown and the decoder judges by applying.
  CheckFn check = nullptr;
};

// The declaration of `kind` (every kind of instruction_kinds.def has one).
const InstructionSignature& instruction_signature(InstructionKind kind);

// What is wrong with `kind`'s declaration, empty when nothing: defaults only on trailing
// slots (rests aside), indices in order, output and decision rules pointing at slots of
// the right type, count slots only for written counts.
std::string signature_problem(InstructionKind kind);

// `inst` in the pinned dialect (TVM v0.18): an older layout upgraded by its kind, bools
// written as 0/1 in bool attrs made bools. Replay accepts both; the script writes this.
Instruction in_pinned_dialect(Instruction inst);

// Whether `arg` is a value of `type`, random variables judged by their type alone.
bool fits_value_type(const Arg& arg, ValueType type);

}  // namespace dragon::schedule
