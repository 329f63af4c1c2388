// Property test: random valid traces of the loop primitives (splits with random and
// non-divisible factors, fuses of adjacent loops, reorders, annotations, loop kinds,
// binds, unit loops, sampled tiles) over every registered op kind at its default shape.
// Each scheduled function must compute what the unscheduled one does on the
// interpreter, and its trace must replay to a structurally equal function.
// At least 2,000 random traces in all, the reference run once per op kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::replays_exactly;
using testing::same_outputs;

struct RandomTrace {
  Schedule sch;
  bool reordered = false;  // a reorder may change the order of reductions (rounding)
  int applied = 0;
};

// One random primitive on a random block of `sch`; ScheduleErrors are expected (random
// choices are often invalid) and must leave the schedule exactly as it was.
void random_step(RandomTrace& t, RandomEngine& rng) {
  Schedule& sch = t.sch;
  std::vector<BlockRV> blocks = sch.get_child_blocks(sch.get_block("root"));
  if (blocks.empty()) return;
  BlockRV block = blocks[rng.uniform_int(0, static_cast<int64_t>(blocks.size()))];
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.empty()) {
    sch.add_unit_loop(block);
    ++t.applied;
    return;
  }
  const int64_t n = static_cast<int64_t>(loops.size());
  LoopRV loop = loops[rng.uniform_int(0, n)];
  const ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  try {
    switch (rng.uniform_int(0, 10)) {
      case 0:
      case 1: {  // split by random factors, perhaps non-divisible, one maybe inferred
        int64_t extent = *ir::as_const_int(sch.get(loop)->extent);
        int parts = static_cast<int>(rng.uniform_int(2, 4));
        int64_t inferred = rng.uniform_int(-1, parts);
        std::vector<SplitFactor> factors;
        for (int i = 0; i < parts; ++i) {
          if (i == inferred) factors.push_back(None{});
          else factors.push_back(rng.uniform_int(1, std::max<int64_t>(2, std::min<int64_t>(extent, 9)) + 1));
        }
        sch.split(loop, factors, rng.uniform_int(0, 2) == 1);
        break;
      }
      case 2: {  // split by a sampled perfect tile
        std::vector<ExprRV> tile = sch.sample_perfect_tile(loop, static_cast<int>(rng.uniform_int(2, 4)), 8);
        sch.split(loop, std::vector<SplitFactor>(tile.begin(), tile.end()));
        break;
      }
      case 3:
      case 4: {  // fuse two or three adjacent loops
        if (n < 2) break;
        int64_t first = rng.uniform_int(0, n - 1);
        int64_t count = std::min<int64_t>(n - first, rng.uniform_int(2, 4));
        sch.fuse(std::vector<LoopRV>(loops.begin() + first, loops.begin() + first + count));
        break;
      }
      case 5:
      case 6: {  // reorder a random window
        if (n < 2) break;
        int64_t first = rng.uniform_int(0, n - 1);
        int64_t last = rng.uniform_int(first + 1, n);
        std::vector<LoopRV> window(loops.begin() + first, loops.begin() + last + 1);
        for (size_t i = window.size(); i-- > 1;) std::swap(window[i], window[rng.uniform_int(0, i + 1)]);
        sch.reorder(window);
        t.reordered = true;
        break;
      }
      case 7: {  // annotations, plain and sampled
        if (rng.uniform_int(0, 2) == 0) {
          ExprRV v = sch.sample_categorical({0, 16, 64}, {0.3, 0.3, 0.4});
          sch.annotate(block, "meta_schedule.unroll_explicit", v);
        } else {
          sch.annotate(loop, "pragma_auto_unroll_max_step", rng.uniform_int(0, 64));
        }
        break;
      }
      case 8: {  // loop kinds
        static const char* kTags[] = {"blockIdx.x", "threadIdx.x", "vthread.y", "threadIdx.z"};
        switch (rng.uniform_int(0, 4)) {
          case 0: sch.parallel(loop); break;
          case 1: sch.vectorize(loop); break;
          case 2: sch.unroll(loop); break;
          default: sch.bind(loop, kTags[rng.uniform_int(0, 4)]); break;
        }
        break;
      }
      default:
        sch.add_unit_loop(rng.uniform_int(0, 2) == 0 ? BlockOrLoop(block) : BlockOrLoop(loop));
        break;
    }
    ++t.applied;
  } catch (const ScheduleError& e) {
    // Failed primitives change nothing; the sample before a failed split stays recorded.
    EXPECT_TRUE(sch.func().same_as(before)) << e.what();
    EXPECT_LE(sch.trace().size(), trace_size + 1) << e.what();
  }
}

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
  std::vector<interp::HostTensor> inputs;    // every argument before the run
  std::vector<interp::HostTensor> expected;  // every argument after the unscheduled run
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
  std::vector<interp::HostTensor> actual = ref.inputs;
  interp::run(scheduled, actual);
  for (size_t p = 0; p < func->params.size(); ++p) {
    if (func->params[p].role == ir::ParamRole::kInput) continue;
    const interp::HostTensor& e = ref.expected[p];
    const interp::HostTensor& a = actual[p];
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

TEST(Property, RandomLoopTracesPreserveSemanticsAndReplay) {
  const int kMinTraces = 2000;
  const int kStepsPerTrace = 10;
  const std::vector<ops::OpKind>& kinds = ops::OpRegistry::global().kinds();
  const int traces_per_op = (kMinTraces + static_cast<int>(kinds.size()) - 1) / static_cast<int>(kinds.size());
  int total_applied = 0, checked = 0;
  for (const ops::OpKind& op : kinds) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    const Reference ref = make_reference(func, 11 + op.name.size());
    for (int trace = 0; trace < traces_per_op; ++trace) {
      RandomEngine rng(1000 * trace + static_cast<int64_t>(op.name.size()) * 7 + op.name[0]);
      RandomTrace t{Schedule(func, rng.fork_seed())};
      for (int step = 0; step < kStepsPerTrace; ++step) random_step(t, rng);
      total_applied += t.applied;
      SCOPED_TRACE(op.name + " trace " + std::to_string(trace) + ":\n" + t.sch.trace().to_string());
      EXPECT_TRUE(matches_reference(func, ref, t.sch.func(), /*exact=*/!t.reordered));
      EXPECT_TRUE(replays_exactly(t.sch));
      ++checked;
    }
  }
  EXPECT_GE(checked, kMinTraces);
  // The generator must actually exercise the primitives, not fail every step.
  EXPECT_GT(total_applied, checked * kStepsPerTrace / 3);
}

}  // namespace
}  // namespace dragon::schedule
