// Internal: an instruction's operands as Schedule::check reads them. Known operands are
// unpacked as replay unpacks them (a malformed one throws the same UserError, which
// check() turns into kFails); unknown ones come back as nullopt. Not the plans
// themselves (primitive/<name>.cc) nor replay (instruction_apply.h).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dragon/schedule/check.h"
#include "dragon/schedule/schedule.h"
#include "planned.h"

namespace dragon::schedule::detail {

// Throws replay's UserError "<Kind>: expected n <what>, got m" unless `args` holds n.
void expect_count(InstructionKind kind, std::string_view what, const std::vector<Arg>& args, size_t n);

class CheckedOperands {
 public:
  CheckedOperands(const Instruction& inst, KnownOperands known) : inst_(inst), known_(known) {}

  InstructionKind kind() const { return inst_.kind; }
  // Throws replay's UserError unless the instruction has `inputs` inputs and `attrs`
  // attrs; with unknown operands, only that each known one is there.
  void expect(size_t inputs, size_t attrs) const;
  void expect_attrs(size_t attrs) const;

  // The operand when known, else null (nullopt).
  const Arg* input(size_t i) const;
  const Arg* attr(size_t i) const;
  std::optional<BlockRV> block(size_t input) const;
  std::optional<LoopRV> loop(size_t input) const;
  std::optional<BlockOrLoop> block_or_loop(size_t input) const;
  std::optional<int64_t> int_attr(size_t attr) const;
  std::optional<bool> bool_attr(size_t attr) const;
  std::optional<std::string_view> string_attr(size_t attr) const;
  // The inputs from `i` to the end, when they are known.
  std::optional<std::span<const Arg>> inputs_from(size_t i) const;
  // Whether every operand is known.
  bool complete() const { return known_.all(); }
  // How many inputs and attrs the instruction holds (unknown ones included).
  size_t input_count() const { return inst_.inputs.size(); }
  size_t attr_count() const { return inst_.attrs.size(); }

 private:
  const Instruction& inst_;
  KnownOperands known_;
};

// The result of a plan: kFails with its error, else kApplies with `outputs` when every
// operand the plan reads was known (`decided`), else kUnknown.
template <typename T>
CheckResult verdict(Planned<T>&& planned, bool decided, size_t outputs = 0) {
  CheckResult result;
  if (!planned.ok()) {
    result.verdict = Verdict::kFails;
    result.error.emplace(std::move(planned).take_error());
    return result;
  }
  result.verdict = decided ? Verdict::kApplies : Verdict::kUnknown;
  result.outputs = outputs;
  return result;
}

inline CheckResult unknown() { return CheckResult{}; }

// The InstructionSignature::check of a kind whose check is `Method`, a Schedule member
// taking the operands (and the decision, for sampling kinds).
template <auto Method>
CheckResult check_method(const Schedule& sch, const CheckedOperands& ops, const std::optional<Arg>& decision) {
  if constexpr (std::is_invocable_v<decltype(Method), const Schedule&, const CheckedOperands&,
                                    const std::optional<Arg>&>) {
    return (sch.*Method)(ops, decision);
  } else {
    return (sch.*Method)(ops);
  }
}

}  // namespace dragon::schedule::detail
