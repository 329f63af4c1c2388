// Property test: random valid traces (random_trace.h: loop primitives, block primitives
// such as caches, compute locations, inlining, rfactor and blockize, CPU-style and
// GPU-style steps) over every registered op kind at its default shape. Each scheduled
// function must compute what the unscheduled one does on the interpreter, and its trace
// must replay to a structurally equal function, JSON round trip included.
// At least 2,000 random traces in all, the reference run once per op kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ops/op_registry.h"
#include "random_trace.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::replays_exactly;
using testing::same_outputs;

// One fixed recipe on every block of named workloads: split the innermost loop by 3
// (rarely divisible, so predicated), fuse the two outermost loops, then parallelize the
// fused loop where it is data parallel. Loop structure only: results bit for bit.
TEST(Property, FixedRecipeOnNamedOpsIsBitExact) {
  int parallel = 0;
  for (const char* spec : {"matmul:m=10,n=7,k=5", "conv2d:batch=1,in_channels=2,out_channels=3,size=7x7,kernel=3x3",
                           "softmax:shape=5x17", "layer_norm:shape=3x4x10", "sum", "embedding_bag", "cumsum",
                           "argmax", "max_pool2d"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    Schedule sch(func);
    for (BlockRV block : sch.get_child_blocks(sch.get_block("root"))) {
      std::vector<LoopRV> loops = sch.get_loops(block);
      if (loops.empty()) continue;
      sch.split(loops.back(), {None{}, int64_t{3}});
      if (loops.size() < 3) continue;  // the split replaced the innermost: fuse needs two others
      LoopRV fused = sch.fuse({loops[0], loops[1]});
      try {
        sch.parallel(fused);
        ++parallel;
      } catch (const ScheduleError& e) {
        EXPECT_EQ(e.error_name(), "NotDataParallel") << spec;
      }
    }
    SCOPED_TRACE(std::string(spec) + ":\n" + ir::print_function(sch.func()));
    EXPECT_TRUE(same_outputs(func, sch.func(), 5, /*exact=*/true));
    EXPECT_TRUE(replays_exactly(sch));
  }
  // Most fused outer loops are spatial; reductions over everything (sum) are not.
  EXPECT_GT(parallel, 5);
}

// The outputs of the unscheduled function on random inputs, computed once per op kind
// (the interpreter dominates the cost of a trace).
struct Reference {
  std::vector<tensor::HostTensor> inputs;    // every argument before the run
  std::vector<tensor::HostTensor> expected;  // every argument after the unscheduled run
};

Reference make_reference(const ir::PrimFunc& func, uint64_t seed) {
  Reference ref{interp::make_arguments(func, seed, interp::Distribution::kNormal), {}};
  ref.expected = ref.inputs;
  interp::run(func, ref.expected);
  return ref;
}

// Whether `scheduled` computes the reference's outputs: byte for byte when `exact`, else
// within 1e-4 of the largest magnitude of each output (reassociated reductions), as
// testing::same_outputs.
::testing::AssertionResult matches_reference(const ir::PrimFunc& func, const Reference& ref,
                                             const ir::PrimFunc& scheduled, bool exact) {
  std::vector<tensor::HostTensor> actual = ref.inputs;
  interp::run(scheduled, actual);
  for (size_t p = 0; p < func->params.size(); ++p) {
    if (func->params[p].role == ir::ParamRole::kInput) continue;
    const tensor::HostTensor& e = ref.expected[p];
    const tensor::HostTensor& a = actual[p];
    if (exact && e.size_bytes() == a.size_bytes() && std::memcmp(e.data(), a.data(), e.size_bytes()) == 0) continue;
    double scale = 0;
    for (int64_t i = 0; i < e.num_elements(); ++i) scale = std::max(scale, std::fabs(e.get(i)));
    for (int64_t i = 0; i < e.num_elements(); ++i) {
      double x = e.get(i), y = a.get(i);
      bool same = exact ? (x == y || (std::isnan(x) && std::isnan(y)))
                        : (std::isnan(x) == std::isnan(y) && !(std::fabs(x - y) > 1e-4 * (scale + 1e-30)));
      if (!same) {
        return ::testing::AssertionFailure() << "output " << func->params[p].buffer->name << " differs at [" << i
                                             << "]: expected " << x << ", got " << y << " (scale " << scale << ")";
      }
    }
    if (exact) {
      return ::testing::AssertionFailure() << "output " << func->params[p].buffer->name << " differs in its bytes";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Property, RandomTracesPreserveSemanticsAndReplay) {
  const int kMinTraces = 2000;
  const int kStepsPerTrace = 10;
  const std::vector<ops::OpKind>& kinds = ops::OpRegistry::global().kinds();
  const int traces_per_op = (kMinTraces + static_cast<int>(kinds.size()) - 1) / static_cast<int>(kinds.size());
  const testing::TargetStyle kStyles[] = {testing::TargetStyle::kCpu, testing::TargetStyle::kGpu,
                                          testing::TargetStyle::kAny};
  testing::RandomTraceStats all;
  int checked = 0;
  for (const ops::OpKind& op : kinds) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    const Reference ref = make_reference(func, 11 + op.name.size());
    for (int trace = 0; trace < traces_per_op; ++trace) {
      testing::RandomTraceOptions options;
      options.steps = kStepsPerTrace;
      options.style = kStyles[trace % 3];
      testing::RandomTraceStats stats;
      const uint64_t seed = 1000 * trace + op.name.size() * 7 + static_cast<uint64_t>(op.name[0]);
      Schedule sch = testing::random_schedule(func, seed, options, &stats);
      SCOPED_TRACE(op.name + " trace " + std::to_string(trace) + ":\n" + sch.trace().to_string());
      for (const std::string& b : stats.broken) ADD_FAILURE() << b;
      EXPECT_TRUE(matches_reference(func, ref, sch.func(), /*exact=*/!stats.reassociated));
      EXPECT_TRUE(replays_exactly(sch));
      all.attempted += stats.attempted;
      all.applied += stats.applied;
      all.undone += stats.undone;
      for (const auto& [name, count] : stats.applied_by_step) all.applied_by_step[name] += count;
      ++checked;
    }
  }
  EXPECT_GE(checked, kMinTraces);
  // The generator must exercise every primitive, not fail every step.
  EXPECT_GT(all.applied, all.attempted / 4);
  std::string counts = "undone=" + std::to_string(all.undone) + " applied=" + std::to_string(all.applied) +
                       " attempted=" + std::to_string(all.attempted) + " ";
  for (const auto& [name, count] : all.applied_by_step) counts += name + "=" + std::to_string(count) + " ";
  RecordProperty("applied_by_step", counts);  // in --gtest_output=xml
  SCOPED_TRACE(counts);
  for (const char* step : {"split", "split_sampled", "fuse", "reorder", "annotate", "parallel", "vectorize", "unroll",
                           "bind", "add_unit_loop", "gpu_bind", "cache_read", "cache_write", "set_scope",
                           "compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
                           "decompose_reduction", "rfactor", "blockize", "sample_compute_location",
                           "sampled_compute_at", "cooperative_fetch"}) {
    // reverse_compute_inline is rarely legal (a complete single producer): ~20 in this run.
    EXPECT_GE(all.applied_by_step[step], std::string(step) == "reverse_compute_inline" ? 10 : 20) << step;
  }
}


// The generator's contract for its other users (lowering, codegen tests): same seed, same
// schedule; the style and step options decide which instructions can appear.
TEST(RandomTrace, DeterministicAndOptionsHonoured) {
  auto kinds_in = [](const Schedule& sch) {
    std::set<InstructionKind> kinds;
    for (const Instruction& inst : sch.trace().instructions()) kinds.insert(inst.kind);
    return kinds;
  };
  for (const char* spec : {"matmul:m=12,n=8,k=6", "softmax:shape=4x16", "conv2d"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    Schedule a = testing::random_schedule(func, 42);
    Schedule b = testing::random_schedule(func, 42);
    EXPECT_EQ(a.trace().to_string(), b.trace().to_string());
    EXPECT_TRUE(ir::structural_equal(a.func(), b.func()));
    for (uint64_t seed = 0; seed < 12; ++seed) {
      testing::RandomTraceOptions cpu;
      cpu.style = testing::TargetStyle::kCpu;
      std::set<InstructionKind> k = kinds_in(testing::random_schedule(func, seed, cpu));
      EXPECT_FALSE(k.count(InstructionKind::Bind));
      testing::RandomTraceOptions gpu;
      gpu.style = testing::TargetStyle::kGpu;
      k = kinds_in(testing::random_schedule(func, seed, gpu));
      EXPECT_FALSE(k.count(InstructionKind::Parallel) || k.count(InstructionKind::Vectorize));
      testing::RandomTraceOptions blocks_only = cpu;
      blocks_only.loop_steps = false;
      blocks_only.reassociation = false;
      testing::RandomTraceStats stats;
      Schedule sch = testing::random_schedule(func, seed, blocks_only, &stats);
      k = kinds_in(sch);
      for (InstructionKind loop_kind : {InstructionKind::Split, InstructionKind::Fuse, InstructionKind::Reorder,
                                        InstructionKind::RFactor, InstructionKind::Parallel}) {
        EXPECT_FALSE(k.count(loop_kind)) << instruction_kind_name(loop_kind);
      }
      EXPECT_FALSE(stats.reassociated);
      EXPECT_TRUE(stats.broken.empty());
      EXPECT_TRUE(same_outputs(func, sch.func(), 3, /*exact=*/true));
    }
  }
}

}  // namespace
}  // namespace dragon::schedule
