// Internal: what a primitive's source uses to record its instruction and to replay it,
// both driven by the kind's declaration (instruction_signature.h): make_instruction lays
// typed operands out as the declaration says, Operands reads them back as typed values,
// replay_method replays a kind whose operands are its method's parameters. Not a public API.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "dragon/schedule/instruction_signature.h"
#include "dragon/schedule/schedule.h"
#include "dragon/support/error.h"

namespace dragon::schedule::detail {

// The declaration of each kind, defined in its primitive's source.
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) extern const InstructionSignature k##Name##Signature;
#include "dragon/schedule/instruction_kinds.def"

// Replays one instruction whose inputs refer to `sch`'s random variables, by its kind's
// declaration (an older TVM layout upgraded first). Returns the outputs in order; throws
// what the primitive throws, and UserError for malformed operands.
std::vector<RandomVar> replay(Schedule& sch, InstructionKind kind, const std::vector<Arg>& inputs,
                              const std::vector<Arg>& attrs, const std::optional<Arg>& decision);

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsVariant : std::false_type {};
template <typename... T>
struct IsVariant<std::variant<T...>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

// ---- Recording -------------------------------------------------------------------------

// An operand as the Arg it is recorded as: random variables, numbers, bools, strings,
// None, the variants of schedule.h (BlockOrLoop, SplitFactor, AnnotationInput), and
// vectors of those as an Arg::List.
template <typename T>
Arg to_arg(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return Arg(std::string(value));
  } else if constexpr (IsVariant<T>::value) {
    return std::visit([](const auto& v) { return to_arg(v); }, value);
  } else if constexpr (IsVector<T>::value) {
    Arg::List list;
    list.reserve(value.size());
    for (const auto& v : value) list.push_back(to_arg(v));
    return Arg(std::move(list));
  } else {
    return Arg(value);
  }
}

// Records one operand where `slot` keeps it (a rest of inputs spliced in); checks that
// it is a value of the slot's type (an internal error otherwise: the primitive records
// against its declaration).
void place(InstructionKind kind, const SlotSignature& slot, Arg value, Instruction& inst);
// The slot after `s` (in written order) that holds an operand, skipping output counts;
// an internal error when there is none.
const SlotSignature& next_operand_slot(InstructionKind kind, size_t& s);
// Checks that every operand slot was given (s: as next_operand_slot left it).
void check_all_operands(InstructionKind kind, size_t s, std::string_view what);

// The instruction of `kind` with `outputs` and the operands, given in the declaration's
// written order (output counts left out), each stored where its slot says.
template <typename... Operand>
Instruction make_instruction(InstructionKind kind, std::vector<RandomVar> outputs, const Operand&... operands) {
  Instruction inst;
  inst.kind = kind;
  size_t s = 0;
  (place(kind, next_operand_slot(kind, s), to_arg(operands), inst), ...);
  check_all_operands(kind, s, "records");
  inst.outputs = std::move(outputs);
  return inst;
}

template <typename RV>
std::vector<RandomVar> as_outputs(const std::vector<RV>& rvs) {
  return std::vector<RandomVar>(rvs.begin(), rvs.end());
}

// ---- Replay ----------------------------------------------------------------------------

// An operand as a typed value: BlockRV, LoopRV, ExprRV, BlockOrLoop, int64_t, int, double,
// bool, std::string, std::string_view (into `a`), SplitFactor, AnnotationInput, Arg
// (unchecked). A value of another shape throws UserError "<Kind>: expected ..., got ...".
// Replay's unpacking and Schedule::check's reading of known operands share them.
template <typename T>
T arg_as(InstructionKind kind, const Arg& a);
template <>
Arg arg_as<Arg>(InstructionKind kind, const Arg& a);
template <>
BlockRV arg_as<BlockRV>(InstructionKind kind, const Arg& a);
template <>
LoopRV arg_as<LoopRV>(InstructionKind kind, const Arg& a);
template <>
ExprRV arg_as<ExprRV>(InstructionKind kind, const Arg& a);
template <>
BlockOrLoop arg_as<BlockOrLoop>(InstructionKind kind, const Arg& a);
template <>
int64_t arg_as<int64_t>(InstructionKind kind, const Arg& a);
template <>
int arg_as<int>(InstructionKind kind, const Arg& a);
template <>
double arg_as<double>(InstructionKind kind, const Arg& a);
template <>
bool arg_as<bool>(InstructionKind kind, const Arg& a);
template <>
std::string arg_as<std::string>(InstructionKind kind, const Arg& a);
template <>
std::string_view arg_as<std::string_view>(InstructionKind kind, const Arg& a);
template <>
SplitFactor arg_as<SplitFactor>(InstructionKind kind, const Arg& a);
template <>
AnnotationInput arg_as<AnnotationInput>(InstructionKind kind, const Arg& a);

// A list operand (a decision, SampleCategorical's candidates) as a vector of T.
const Arg::List& list_arg(InstructionKind kind, const Arg& a);
template <typename T>
std::vector<T> list_as(InstructionKind kind, const Arg& a) {
  const Arg::List& list = list_arg(kind, a);
  std::vector<T> out;
  out.reserve(list.size());
  for (const Arg& e : list) out.push_back(arg_as<T>(kind, e));
  return out;
}

// An instruction's operands seen through its kind's declaration. Construction checks the
// number of inputs and attrs; unpack converts each slot to a typed value. Malformed
// operands throw UserError naming the kind and what was expected.
class Operands {
 public:
  Operands(InstructionKind kind, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
           const std::optional<Arg>& decision);

  InstructionKind kind() const { return kind_; }

  // The operand slots in written order (output counts left out) as T..., a std::optional
  // among them (the last) standing for the decision. Types: BlockRV, LoopRV, ExprRV,
  // BlockOrLoop, int64_t, int, double, bool, std::string, std::string_view (into the
  // instruction), SplitFactor, AnnotationInput, Arg (unchecked), and std::vector of those
  // for lists and rests.
  template <typename... T>
  std::tuple<T...> unpack() const {
    size_t s = 0;
    std::tuple<T...> out{argument<T>(s)...};  // braces: evaluated left to right
    check_all_operands(kind_, s, "replays");
    return out;
  }

 private:
  template <typename T>
  T argument(size_t& s) const {
    if constexpr (IsOptional<T>::value) {
      if (!decision_) return std::nullopt;
      return value<typename T::value_type>(*decision_, "decision");
    } else {
      const SlotSignature& slot = next_operand_slot(kind_, s);
      if constexpr (IsVector<T>::value) {
        std::span<const Arg> args = elements(slot);
        T out;
        out.reserve(args.size());
        for (const Arg& a : args) out.push_back(element<typename T::value_type>(a));
        return out;
      } else {
        return element<T>(single(slot));
      }
    }
  }

  // A decision: one value or a list of them.
  template <typename T>
  T value(const Arg& a, std::string_view what) const {
    if constexpr (IsVector<T>::value) {
      T out;
      for (const Arg& e : list(a, what)) out.push_back(element<typename T::value_type>(e));
      return out;
    } else {
      return element<T>(a);
    }
  }

  template <typename T>
  T element(const Arg& a) const {
    return arg_as<T>(kind_, a);
  }

  const Arg& single(const SlotSignature& slot) const;
  std::span<const Arg> elements(const SlotSignature& slot) const;
  const Arg::List& list(const Arg& a, std::string_view what) const;

  InstructionKind kind_;
  const std::vector<Arg>& inputs_;
  const std::vector<Arg>& attrs_;
  const std::optional<Arg>& decision_;
};

template <typename Method>
struct MethodShape;
template <typename R, typename... P>
struct MethodShape<R (Schedule::*)(P...)> {
  using Result = R;
  using Arguments = std::tuple<std::remove_cvref_t<P>...>;
};

template <typename... T>
std::tuple<T...> unpack_as(const Operands& operands, std::type_identity<std::tuple<T...>>) {
  return operands.unpack<T...>();
}

// The replay function of a kind whose operand slots are, in order, the parameters of
// `Method` (a trailing std::optional parameter taking the decision): most kinds.
template <auto Method>
std::vector<RandomVar> replay_method(Schedule& sch, const Operands& operands) {
  using Shape = MethodShape<decltype(Method)>;
  auto arguments = unpack_as(operands, std::type_identity<typename Shape::Arguments>{});
  auto call = [&](auto&&... a) { return (sch.*Method)(std::move(a)...); };
  if constexpr (std::is_void_v<typename Shape::Result>) {
    std::apply(call, std::move(arguments));
    return {};
  } else if constexpr (IsVector<typename Shape::Result>::value) {
    return as_outputs(std::apply(call, std::move(arguments)));
  } else {
    return {RandomVar(std::apply(call, std::move(arguments)))};
  }
}

}  // namespace dragon::schedule::detail
