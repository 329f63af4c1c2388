// ScheduleError: a primitive's precondition failed (CONVENTIONS.md habit 8). Names the
// instruction, the operand and the reason; search catches it and moves on. Not for bad
// input text (UserError) nor for our own bugs (InternalError).
#pragma once

#include <string>

#include "dragon/ir/function.h"
#include "dragon/schedule/instruction.h"
#include "dragon/support/error.h"

namespace dragon::schedule {

// What the detailed message marks in the printed IR: a loop (by its variable) or a block.
struct ErrorLocus {
  const ir::VarNode* loop_var = nullptr;
  std::string block_name;
};

// The error's type is (instruction kind, precondition number): each primitive documents
// "Requires: 1) ... 2) ..." in schedule.h and fails precondition k with exactly one
// named error. Precondition 0 is shared by all: an operand does not resolve (a random
// variable from another schedule, a loop replaced by an earlier primitive, a block
// that no longer exists).
class ScheduleError : public Error {
 public:
  // `operand` names the operand as the trace does ("loop l3", "factors[1]");
  // `func` is the function the primitive was applied to.
  ScheduleError(InstructionKind kind, int precondition, std::string error_name, std::string operand,
                std::string reason, ir::PrimFunc func, ErrorLocus locus = {});
  // An error without text (what() is empty), for checks that want only the verdict.
  ScheduleError(InstructionKind kind, int precondition, std::string error_name);

  InstructionKind kind() const { return kind_; }
  int precondition() const { return precondition_; }
  // PascalCase name of the failed precondition: "WrongFactorProduct".
  const std::string& error_name() const { return error_name_; }
  const std::string& operand() const { return operand_; }
  const std::string& reason() const { return reason_; }
  // what(): the cheap one-line message, computed without printing IR:
  // "Split: loop l3: precondition 3 (WrongFactorProduct): ..."
  // detail(): that line, then the function's canonical IR with the offending loop or
  // block marked "  <-- here".
  std::string detail() const;

 private:
  InstructionKind kind_;
  int precondition_;
  std::string error_name_;
  std::string operand_;
  std::string reason_;
  ir::PrimFunc func_;
  ErrorLocus locus_;
};

// The canonical IR of `func` with the line of the loop or block in `locus` marked
// "  <-- here" (unmarked when the locus is empty or not found).
std::string print_with_marker(const ir::PrimFunc& func, const ErrorLocus& locus);

}  // namespace dragon::schedule
