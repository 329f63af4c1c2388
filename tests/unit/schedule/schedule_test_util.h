// Shared helpers for schedule tests: workloads, running a function before and after
// scheduling on the same random inputs, and looking for lines in printed IR.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"

namespace dragon::schedule::testing {

ir::PrimFunc workload(std::string_view spec);

// Runs `before` and `after` (same parameters) on the same inputs drawn with `seed` and
// compares every output: byte for byte when `exact`, else within a relative tolerance
// scaled by the largest magnitude of the reference output (reassociated reductions).
::testing::AssertionResult same_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed = 7,
                                        bool exact = true);

// Whether some line of `text` contains `piece` (after trimming indentation).
::testing::AssertionResult has_line(const std::string& text, std::string_view piece);

// Replays the schedule's trace on its original function and checks the result is
// structurally equal to the scheduled function; the JSON round trip too.
::testing::AssertionResult replays_exactly(const Schedule& sch);

// Whether the line of `detail` that contains `piece` is the one marked "<-- here".
inline bool marks(const std::string& detail, const std::string& piece) {
  size_t at = detail.find(piece);
  if (at == std::string::npos) return false;
  size_t end = detail.find('\n', at);
  return detail.substr(at, end - at).find("<-- here") != std::string::npos;
}

// What a primitive's refusal must say: its numbered precondition, the error's name and the
// operand it names.
struct ExpectedRefusal {
  int precondition;
  std::string error_name;
  std::string operand;
};

// Runs `apply`, which must throw a ScheduleError of `kind` as `expected` says, naming the
// operand in its message, with `reason_piece` in its reason and the line holding `marked`
// marked in its detail; the schedule (function and trace) must be unchanged.
inline void expect_refusal(InstructionKind kind, Schedule& sch, const std::function<void()>& apply,
                           const ExpectedRefusal& expected, const std::string& marked,
                           const std::string& reason_piece = {}) {
  ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  try {
    apply();
    ADD_FAILURE() << "expected " << expected.error_name;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), kind);
    EXPECT_EQ(e.precondition(), expected.precondition) << e.what();
    EXPECT_EQ(e.error_name(), expected.error_name) << e.what();
    EXPECT_EQ(e.operand(), expected.operand) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected.operand), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find(reason_piece), std::string::npos) << e.reason();
    EXPECT_TRUE(marks(e.detail(), marked)) << e.detail();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size);
}

// A gather of an intermediate: B = A * 2 + 1 over all 8 rows, C[i] = B[idx[i]] (C declares
// the whole of B as read, since its index is data-dependent). For compute_at and
// compute_inline into a gather.

inline constexpr const char* kGatherOfIntermediate = R"(func gather(in A: f32[8], in idx: i32[4] range(0, 8), out C: f32[4]) {
  block root {
    alloc B: f32[8]
    for i0 in 8 {
      block B [vi0: S 8 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] * 2f32 + 1f32
      }
    }
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads idx[vi0], B[0 +: 8]
        writes C[vi0]
        C[vi0] = B[idx[vi0]]
      }
    }
  }
}
)";

}  // namespace dragon::schedule::testing
