// Internal: the replay functions named in instruction_kinds.def, each defined in its
// primitive's file, and the argument helpers they share. Not a public API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/schedule/schedule.h"

namespace dragon::schedule::detail {

// Replays one instruction: inputs already refer to `sch`'s random variables; returns the
// outputs in order. Malformed inputs or attrs throw UserError.
using ApplyFn = std::vector<RandomVar> (*)(Schedule& sch, const std::vector<Arg>& inputs,
                                           const std::vector<Arg>& attrs, const std::optional<Arg>& decision);

#define DRAGON_INSTRUCTION_KIND(Name, is_pure, apply)                                                 \
  std::vector<RandomVar> apply(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs, \
                               const std::optional<Arg>& decision);
#include "dragon/schedule/instruction_kinds.def"
std::vector<RandomVar> apply_unimplemented(Schedule& sch, const std::vector<Arg>& inputs,
                                           const std::vector<Arg>& attrs, const std::optional<Arg>& decision);

ApplyFn apply_function(InstructionKind kind);

// Argument access for apply functions: each throws UserError naming the kind and what
// was expected when the argument has another shape.
void expect_count(InstructionKind kind, std::string_view what, const std::vector<Arg>& args, size_t n);
RandomVar rv_arg(InstructionKind kind, const Arg& arg, RVType type);
BlockRV block_arg(InstructionKind kind, const Arg& arg);
LoopRV loop_arg(InstructionKind kind, const Arg& arg);
BlockOrLoop block_or_loop_arg(InstructionKind kind, const Arg& arg);
int64_t int_arg(InstructionKind kind, const Arg& arg);
double float_arg(InstructionKind kind, const Arg& arg);
bool bool_arg(InstructionKind kind, const Arg& arg);
const std::string& string_arg(InstructionKind kind, const Arg& arg);
std::vector<int64_t> int_list_arg(InstructionKind kind, const Arg& arg);
std::vector<double> float_list_arg(InstructionKind kind, const Arg& arg);

template <typename RV>
std::vector<RandomVar> as_outputs(const std::vector<RV>& rvs) {
  return std::vector<RandomVar>(rvs.begin(), rvs.end());
}

}  // namespace dragon::schedule::detail
