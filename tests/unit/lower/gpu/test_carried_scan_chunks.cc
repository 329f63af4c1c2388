// carry_loop_values on a scan whose axis is split into chunks staged in shared memory, the
// schedule that makes a scan's loads coalesced: a block of row threads copies a chunk of
// each row into shared memory together, then each thread scans its row's chunk. The
// running value is carried across the chunks in a register (no load of the output, no
// barrier between the steps), and the kernel computes the op for every scan kind when
// its threads run one after another between barriers (barrier_simulator.h).
#include <gtest/gtest.h>

#include <string>

#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/auto_bind.h"
#include "barrier_simulator.h"
#include "gpu_test_util.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower {
namespace {

// Rows on 8 threads of a block, the scan axis in chunks of 4 copied into shared memory by
// the block's threads (rows padded by one element against bank conflicts); `read` is the
// scan block's read of its input.
std::string chunked_scan(int read) {
  return R"(gb Y
gl b0 2
sp l0 None 8
sp l1 None 4
ro l2 l4 l3 l5
bind l2 bx
bind l3 tx
cr b0 )" + std::to_string(read) + R"( shared b0
ca b1 l4
gl b1 4
fu l8 l9
sp l10 None 8
bind l12 tx
sa b1 0 0 32 1
)";
}

TEST(CarriedScanChunks, EveryScanKindCarriesItsValueAcrossSharedMemoryChunks) {
  // The exclusive scan reads its running value first, then its input.
  for (auto [spec, read] : {std::pair{"cumsum:shape=16x12,dim=1", 0}, {"cumsum:shape=16x12,dim=1,reverse=true", 0},
                            {"cumsum:shape=16x12,dim=1,exclusive=true", 1}, {"cumprod:shape=16x12,dim=1", 0},
                            {"masked_cumsum:shape=16x12,dim=1", 0}}) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    schedule::Schedule sch = schedule::replay(script::decode(chunked_scan(read)), func);
    search::auto_bind(sch);  // the masked scan's elementwise producer
    const ir::PrimFunc scheduled = sch.func();
    std::vector<testing::Stage> stages = testing::lower_stages(scheduled, Target::cuda_h200());
    const ir::PrimFunc& kernel = stages.back().func;
    EXPECT_EQ(testing::loads_of(kernel, "Y"), 0) << ir::print_function(kernel);
    EXPECT_GT(testing::loads_of(kernel, "Y_carry"), 0) << ir::print_function(kernel);
    // The copy's two barriers per chunk; none between a thread's own steps.
    EXPECT_EQ(testing::count_syncs(kernel->body), 2) << ir::print_function(kernel);
    EXPECT_TRUE(testing::close_outputs(func, testing::serialize_between_barriers(kernel))) << ir::print_function(kernel);
  }
}

// With the chunk loop outside a serial loop over rows, the previous step of the nest is
// another row's: nothing is carried and the output is read back as before.
TEST(CarriedScanChunks, AChunkLoopAroundASerialRowLoopCarriesNothing) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload("cumsum:shape=4x12,dim=1").func;
  const ir::PrimFunc scheduled = schedule::replay(script::decode(R"(gb Y
gl b0 2
sp l1 None 4
ro l2 l0 l3
)"),
                                                  func)
                                     .func();
  std::vector<testing::Stage> stages = testing::lower_stages(scheduled, Target::cpu());
  const ir::PrimFunc& lowered = stages.back().func;
  EXPECT_GT(testing::loads_of(lowered, "Y"), 0) << ir::print_function(lowered);
  EXPECT_EQ(testing::loads_of(lowered, "Y_carry"), 0) << ir::print_function(lowered);
  EXPECT_TRUE(testing::close_outputs(func, lowered)) << ir::print_function(lowered);
}

// On the CPU, the chunks of a split scan axis (no threads) carry the value too.
TEST(CarriedScanChunks, ASplitScanAxisOnTheCpuCarriesAcrossChunks) {
  for (const char* spec : {"cumsum:shape=4x12,dim=1,reverse=true", "cumprod:shape=3x12,dim=1"}) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    const ir::PrimFunc scheduled = schedule::replay(script::decode("gb Y\ngl b0 2\nsp l1 None 3\n"), func).func();
    std::vector<testing::Stage> stages = testing::lower_stages(scheduled, Target::cpu());
    const ir::PrimFunc& lowered = stages.back().func;
    EXPECT_EQ(testing::loads_of(lowered, "Y"), 0) << ir::print_function(lowered);
    EXPECT_TRUE(testing::close_outputs(func, lowered)) << ir::print_function(lowered);
  }
}

}  // namespace
}  // namespace dragon::lower
