// What Schedule::check says of an instruction without applying it: whether it applies,
// and what it would return. The operands it is told may be partial (a line of a script
// being written); it then answers for every value the unknown ones could take. Not the
// primitives' preconditions themselves (each primitive's plan, src/schedule/primitive/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "dragon/schedule/instruction.h"
#include "dragon/schedule/schedule_error.h"

namespace dragon::schedule {

enum class Verdict : uint8_t {
  kFails,    // it fails, whatever its unknown operands hold
  kApplies,  // it applies, whatever its unknown operands hold
  kUnknown,  // the outcome depends on unknown operands
};

// Which operands of an instruction check() is told: bit i of `inputs` for inputs[i], of
// `attrs` for attrs[i]. A list of inputs running to the end (Split's factors, Fuse's
// loops) is known when the bits from its first index up are all set. Unknown operands
// are ignored, whatever the instruction holds there: the verdict covers every
// well-formed value they could take (a malformed one fails replay whatever the others).
struct KnownOperands {
  uint64_t inputs = ~uint64_t{0};
  uint64_t attrs = ~uint64_t{0};

  bool all() const { return inputs == ~uint64_t{0} && attrs == ~uint64_t{0}; }
  bool input(size_t i) const { return i >= 64 || ((inputs >> i) & 1) != 0; }
  bool attr(size_t i) const { return i >= 64 || ((attrs >> i) & 1) != 0; }
  // Whether the inputs from `i` to the end are known.
  bool inputs_from(size_t i) const { return i >= 64 || (inputs >> i) == (~uint64_t{0} >> i); }
};

struct CheckResult {
  Verdict verdict = Verdict::kUnknown;
  // kFails on a failed precondition: the error the primitive would throw. Absent when the
  // operands are malformed (replay would throw a UserError) or unknown ones decide.
  std::optional<ScheduleError> error;
  // kApplies: how many random variables it returns, and for a sampling instruction given
  // a decision, the decision it records (a perfect tile repaired, a compute location
  // moved to the nearest candidate).
  size_t outputs = 0;
  std::optional<Arg> decision;
};

}  // namespace dragon::schedule
