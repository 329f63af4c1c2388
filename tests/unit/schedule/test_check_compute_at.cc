// check_compute_at must agree with compute_at, and check_reverse_compute_at with
// reverse_compute_at: on random schedules of several workloads, for every block, every
// loop (location marks included) and a few indices, the check passes exactly when the
// primitive applies, and fails with the primitive's error (kind, precondition, name,
// reason) otherwise. The script decoder trusts the checks in place of trial
// applications, so any drift would change which scripts it accepts.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/functor.h"
#include "dragon/ops/op_registry.h"
#include "random_trace.h"

namespace dragon::schedule {
namespace {

class BlockNames : public ir::StmtVisitor {
 public:
  std::vector<std::string> names;

 protected:
  void visit_(const ir::BlockNode* op) override {
    names.push_back(op->name);
    ir::StmtVisitor::visit_(op);
  }
};

// The outcome of one call: nullopt when it returned, else what it threw.
struct Failure {
  bool schedule_error = false;
  InstructionKind kind{};
  int precondition = 0;
  std::string name;
  std::string reason;
};

template <typename F>
std::optional<Failure> outcome(F&& call) {
  try {
    call();
  } catch (const ScheduleError& e) {
    return Failure{true, e.kind(), e.precondition(), e.error_name(), e.reason()};
  } catch (const std::exception& e) {
    return Failure{false, {}, 0, {}, e.what()};
  }
  return std::nullopt;
}

struct ComputeAtTally {
  int applied = 0;
  int refused = 0;
  int marks = 0;
};

// Which primitive is compared with its check.
enum class Primitive { kComputeAt, kReverseComputeAt };

void compare_all(Schedule& sch, const std::string& label, Primitive primitive, ComputeAtTally& tally) {
  const bool reverse = primitive == Primitive::kReverseComputeAt;
  BlockNames blocks;
  blocks.visit(sch.func()->body);
  std::vector<BlockRV> block_rvs;
  std::vector<LoopRV> loop_rvs;
  for (const std::string& name : blocks.names) {
    BlockRV b = sch.get_block(name);
    block_rvs.push_back(b);
    for (LoopRV l : sch.get_loops(b)) loop_rvs.push_back(l);
  }
  const size_t marks_from = loop_rvs.size();
  for (BlockRV b : block_rvs) {
    try {
      loop_rvs.push_back(sch.sample_compute_location(b));
    } catch (const std::exception&) {
      // not every block has a location to sample; the others still do
    }
  }
  for (BlockRV b : block_rvs) {
    for (size_t li = 0; li < loop_rvs.size(); ++li) {
      for (int64_t index : {int64_t{-1}, int64_t{-2}, int64_t{0}, int64_t{1}, int64_t{3}}) {
        const size_t trace_before = sch.trace().size();
        std::optional<Failure> checked = outcome([&] {
          if (reverse) sch.check_reverse_compute_at(b, loop_rvs[li], index);
          else sch.check_compute_at(b, loop_rvs[li], index);
        });
        ASSERT_EQ(sch.trace().size(), trace_before) << label << ": the check recorded an instruction";
        Schedule applied = sch.copy();
        std::optional<Failure> real = outcome([&] {
          if (reverse) applied.reverse_compute_at(b, loop_rvs[li], true, index);
          else applied.compute_at(b, loop_rvs[li], true, index);
        });
        const std::string where = label + " block " + std::to_string(b.id) + " loop " +
                                  std::to_string(loop_rvs[li].id) + " index " + std::to_string(index);
        ASSERT_EQ(checked.has_value(), real.has_value())
            << where << ": " << (checked ? "check refused: " + checked->reason : "apply refused: " + real->reason);
        if (li >= marks_from) ++tally.marks;
        if (!real) {
          ++tally.applied;
          continue;
        }
        ++tally.refused;
        EXPECT_EQ(checked->schedule_error, real->schedule_error) << where;
        EXPECT_EQ(checked->kind, real->kind) << where;
        EXPECT_EQ(checked->precondition, real->precondition) << where;
        EXPECT_EQ(checked->name, real->name) << where;
        EXPECT_EQ(checked->reason, real->reason) << where;
      }
    }
  }
}

// Every block at every loop of random schedules of several workloads (`steps` random
// instructions each), both outcomes tallied.
ComputeAtTally compare_on_random_schedules(Primitive primitive, int steps) {
  ComputeAtTally tally;
  for (const char* spec : {"matmul:m=12,n=8,k=6", "softmax:shape=4x16", "conv2d", "layer_norm:shape=3x4x10"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      testing::RandomTraceOptions options;
      options.steps = steps;
      Schedule sch = testing::random_schedule(func, seed, options);
      compare_all(sch, std::string(spec) + " seed " + std::to_string(seed), primitive, tally);
      if (::testing::Test::HasFatalFailure()) return tally;
    }
  }
  return tally;
}

TEST(CheckComputeAt, AgreesWithComputeAtOnRandomSchedules) {
  const ComputeAtTally tally = compare_on_random_schedules(Primitive::kComputeAt, 6);
  if (HasFatalFailure()) return;
  // Both outcomes and the marks must actually be exercised.
  EXPECT_GT(tally.applied, 50);
  EXPECT_GT(tally.refused, 50);
  EXPECT_GT(tally.marks, 10);
}

TEST(CheckReverseComputeAt, AgreesWithReverseComputeAtOnRandomSchedules) {
  const ComputeAtTally tally = compare_on_random_schedules(Primitive::kReverseComputeAt, 6);
  if (HasFatalFailure()) return;
  // Both outcomes and the marks must actually be exercised.
  EXPECT_GT(tally.applied, 20);
  EXPECT_GT(tally.refused, 50);
  EXPECT_GT(tally.marks, 10);
}

}  // namespace
}  // namespace dragon::schedule
