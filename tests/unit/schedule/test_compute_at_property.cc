// Property test for compute_at and reverse_compute_at: random splits (non-divisible
// factors included) and fuses of the host block's loops, then the block moved under a
// random loop of it. Every success must compute what the unscheduled function does, bit
// for bit, and replay exactly; every ScheduleError must leave the schedule unchanged.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

constexpr const char* kChain5x6 = R"(func chain2d(in A: f32[5, 6], out C: f32[5, 6]) {
  block root {
    alloc B: f32[5, 6]
    for i0 in 5 {
      for i1 in 6 {
        block B [vi0: S 5 = i0, vi1: S 6 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = A[vi0, vi1] * 2f32
        }
      }
    }
    for i0 in 5 {
      for i1 in 6 {
        block C [vi0: S 5 = i0, vi1: S 6 = i1] {
          reads B[vi0, vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = B[vi0, vi1] + 1f32
        }
      }
    }
  }
}
)";

struct Case {
  std::string program;  // a workload spec, or IR text
  std::string moved;    // the block that moves
  std::string host;     // the block whose loops it moves under
  bool reverse;
};

ir::PrimFunc load(const std::string& program) {
  return program.rfind("func ", 0) == 0 ? ir::parse_function(program) : workload(program);
}

// Random splits and perhaps a fuse of the host's loops.
void reshape_host(Schedule& sch, const std::string& host, RandomEngine& rng) {
  int steps = static_cast<int>(rng.uniform_int(0, 3));
  for (int s = 0; s < steps; ++s) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block(host));
    LoopRV loop = loops[rng.uniform_int(0, static_cast<int64_t>(loops.size()))];
    try {
      if (rng.uniform_int(0, 4) == 0 && loops.size() >= 2) {
        sch.fuse({loops[0], loops[1]});
      } else {
        int64_t extent = *ir::as_const_int(sch.get(loop)->extent);
        sch.split(loop, {None{}, rng.uniform_int(1, std::max<int64_t>(2, extent) + 1)});
      }
    } catch (const ScheduleError&) {
    }
  }
}

TEST(ComputeAtProperty, RandomLocationsPreserveSemantics) {
  std::vector<Case> cases = {
      {"conv2d:batch=1,in_channels=2,out_channels=2,size=7x7,kernel=3x3,stride=2x2,padding=1x1", "X_pad", "Y", false},
      {"conv2d:batch=1,in_channels=2,out_channels=2,size=6x5,kernel=3x2,padding=1x1", "X_pad", "Y", false},
      {"softmax:shape=4x16", "x_max", "x_exp", false},
      {kChain5x6, "B", "C", false},
      {"softmax:shape=4x16", "softmax", "exp_sum", true},
      {"softmax:shape=4x16", "x_exp", "x_max", true},
      {kChain5x6, "C", "B", true},
  };
  RandomEngine rng(2024);
  int applied = 0, refused = 0;
  for (int trial = 0; trial < 140; ++trial) {
    const Case& c = cases[trial % cases.size()];
    SCOPED_TRACE(c.program.substr(0, 40) + " " + c.moved + (c.reverse ? " reverse" : ""));
    Schedule sch(load(c.program), trial);
    reshape_host(sch, c.host, rng);
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block(c.host));
    LoopRV loop = loops[rng.uniform_int(0, static_cast<int64_t>(loops.size()))];
    bool preserve = rng.uniform_int(0, 2) == 1;
    int64_t index = rng.uniform_int(0, 2) == 1 ? -1 : -2;
    BlockRV moved = sch.get_block(c.moved);
    const ir::PrimFunc before = sch.func();
    const size_t trace_size = sch.trace().size();
    try {
      if (c.reverse) sch.reverse_compute_at(moved, loop, preserve, index);
      else sch.compute_at(moved, loop, preserve, index);
      ++applied;
    } catch (const ScheduleError& e) {
      ++refused;
      EXPECT_TRUE(sch.func().same_as(before)) << e.what();
      EXPECT_EQ(sch.trace().size(), trace_size);
      continue;
    }
    ASSERT_TRUE(same_outputs(sch.original(), sch.func()));
    ASSERT_TRUE(replays_exactly(sch));
  }
  EXPECT_GT(applied, 80) << refused << " refused";
}

}  // namespace
}  // namespace dragon::schedule
