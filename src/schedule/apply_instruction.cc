// The public single-instruction replay (apply_instruction.h) over the internal replay
// table (instruction_apply.h). Not the table itself.
#include "dragon/schedule/apply_instruction.h"

#include "instruction_apply.h"

namespace dragon::schedule {

std::vector<RandomVar> apply_instruction(Schedule& sch, const Instruction& inst, const std::optional<Arg>& decision) {
  return detail::apply_function(inst.kind)(sch, inst.inputs, inst.attrs, decision);
}

bool can_apply_instruction(InstructionKind kind) {
  return detail::apply_function(kind) != &detail::apply_unimplemented;
}

}  // namespace dragon::schedule
