#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "dragon/schedule/index_map.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

TEST(TransformBlockLayout, Dev) {
  Schedule sch(workload("conv2d:batch=2,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  BlockRV y = sch.get_block("Y");
  BlockRV a = sch.reindex(y, 0, Type::kRead);
  BlockRV b = sch.reindex(y, 1, Type::kRead);
  BlockRV c = sch.reindex(y, 0, Type::kWrite);
  sch.transform_layout(a, 0, Type::kWrite, IndexMap::parse("lambda n, h, w, rc, kh, kw: (n * 36 + h * 6 + w, rc * 9 + kh * 3 + kw)"));
  sch.transform_layout(b, 0, Type::kWrite, IndexMap::parse("lambda oc, rc, kh, kw: (oc, rc * 9 + kh * 3 + kw)"));
  sch.transform_layout(c, 0, Type::kRead, IndexMap::parse("lambda n, oc, h, w: (n * 36 + h * 6 + w, oc)"));
  sch.transform_block_layout(y, IndexMap::parse("lambda n, oc, h, w, rc, kh, kw: (n * 36 + h * 6 + w, oc, rc * 9 + kh * 3 + kw)"));
  std::cout << ir::print_function(sch.func());
  std::cout << sch.trace().to_string();
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
