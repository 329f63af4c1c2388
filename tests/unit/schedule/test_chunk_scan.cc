// chunk_scan: the totals, carries and chunked scan it builds, semantic preservation for
// every scan operator (forward, reverse, exclusive, masked, products, lengths -> offsets,
// a running max), chunks that do not divide the axis, a second level of chunks, and each
// precondition.
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

// Splits the scan loop of `block` (its loop at `scan`) into chunks of `chunk` and runs
// chunk_scan over them; returns the total block.
BlockRV chunk_scan_of(Schedule& sch, const std::string& block, size_t scan, int64_t chunk) {
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(block));
  std::vector<LoopRV> parts = sch.split(loops[scan], {None{}, chunk});
  return sch.chunk_scan(parts[0]);
}

TEST(ChunkScan, LengthsToOffsetsBecomeTotalsCarriesAndAChunkedScan) {
  Schedule sch(workload("lengths_to_offsets:batch=15,include_total=true,index_dtype=i32"));
  BlockRV total = chunk_scan_of(sch, "offsets", 0, 4);
  EXPECT_EQ(sch.get(total)->name, "offsets_chunk_total");
  std::vector<BlockRV> carry = sch.get_consumers(total);
  ASSERT_EQ(carry.size(), 1u);
  EXPECT_EQ(sch.get(carry[0])->name, "offsets_chunk_carry");
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc offsets_chunk_total: i32[4]")) << text;
  EXPECT_TRUE(has_line(text, "alloc offsets_chunk_carry: i32[4]")) << text;
  EXPECT_TRUE(has_line(text, "block offsets_chunk_total [vi0_0: S 4 = i0_0, vi0_1: R 4 = i0_1] {")) << text;
  EXPECT_TRUE(has_line(text, "block offsets_chunk_carry [vi0_0: O 4 = i0_0] {")) << text;
  EXPECT_TRUE(has_line(text, "block offsets [vi0_0: S 4 = i0_0, vi0_1: O 4 = i0_1] {")) << text;
  // 16 offsets in chunks of 4: every block exact on integers.
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/true));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ChunkScan, EveryScanOperatorKeepsItsResults) {
  struct Case {
    const char* spec;
    const char* block;
    size_t scan;  // the scan loop's position
    bool exact;
  };
  const std::vector<Case> cases = {
      {"cumsum:shape=3x40,dim=1", "Y", 1, false},
      {"cumsum:shape=3x40,dim=1,reverse=true", "Y", 1, false},
      {"cumsum:shape=3x40,dim=1,exclusive=true", "Y", 1, false},
      {"cumsum:shape=3x40,dim=1,reverse=true,exclusive=true", "Y", 1, false},
      {"cumsum:shape=40x3,dim=0", "Y", 0, false},
      {"masked_cumsum:shape=3x40,dim=1", "Y", 1, false},
      {"cumprod:shape=3x40,dim=1", "Y", 1, false},
      {"cumprod:shape=3x40,dim=1,reverse=true", "Y", 1, false},
      {"lengths_to_offsets:batch=40,include_total=false,index_dtype=i64", "offsets", 0, true},
      {"lengths_to_offsets:batch=40,include_total=true,index_dtype=i32", "offsets", 0, true},
  };
  for (const Case& c : cases) {
    for (int64_t chunk : {int64_t{2}, int64_t{7}, int64_t{8}, int64_t{39}}) {
      SCOPED_TRACE(std::string(c.spec) + " in chunks of " + std::to_string(chunk));
      Schedule sch(workload(c.spec));
      chunk_scan_of(sch, c.block, c.scan, chunk);
      EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 11, c.exact));
      EXPECT_TRUE(replays_exactly(sch));
    }
  }
}

TEST(ChunkScan, ARunningMaxIsExact) {
  const ir::PrimFunc func = ir::parse_function(R"(func running_max(in X: f32[2, 30], out Y: f32[2, 30]) {
  block root {
    for i0 in 2 {
      for i1 in 30 {
        block Y [vi0: S 2 = i0, vi1: O 30 = i1] {
          reads Y[vi0, vi1 - 1], X[vi0, vi1]
          writes Y[vi0, vi1]
          Y[vi0, vi1] = select(vi1 == 0, X[vi0, vi1], max(Y[vi0, vi1 - 1], X[vi0, vi1]))
        }
      }
    }
  }
})");
  Schedule sch(func);
  chunk_scan_of(sch, "Y", 1, 8);
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "Y_chunk_carry[vi0, vi1_0] = select(vi1_0 == 0, ")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 3, /*exact=*/true));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(ChunkScan, TheChunkedScanCanBeChunkedAgain) {
  Schedule sch(workload("lengths_to_offsets:batch=255,include_total=true,index_dtype=i32"));
  chunk_scan_of(sch, "offsets", 0, 32);
  // The scan block's loops are now [chunk, position]: chunk the positions again.
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("offsets"));
  std::vector<LoopRV> parts = sch.split(loops[1], {None{}, int64_t{8}});
  sch.chunk_scan(parts[0]);
  // And the carries, a scan over the 8 chunks.
  std::vector<LoopRV> carry = sch.get_loops(sch.get_block("offsets_chunk_carry"));
  sch.chunk_scan(sch.split(carry[0], {None{}, int64_t{2}})[0]);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 5, /*exact=*/true));
  EXPECT_TRUE(replays_exactly(sch));
}

struct ChunkScanErrorCase {
  std::string name;
  std::string spec;
  std::function<void(Schedule&)> apply;
  int precondition;
  std::string error_name;
};

TEST(ChunkScan, PreconditionErrors) {
  const std::string cumsum = "cumsum:shape=3x16,dim=1";
  const std::vector<ChunkScanErrorCase> cases = {
      {"a bound loop", cumsum,
       [](Schedule& sch) {
         std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
         std::vector<LoopRV> parts = sch.split(loops[1], {None{}, int64_t{4}});
         sch.unroll(parts[0]);
         sch.chunk_scan(parts[0]);
       },
       1, "UnsupportedLoop"},
      {"a reduction", "matmul:m=4,n=4,k=8",
       [](Schedule& sch) { sch.chunk_scan(sch.get_loops(sch.get_block("C"))[2]); }, 2, "NotScanBlock"},
      {"an unsplit scan loop", cumsum,
       [](Schedule& sch) { sch.chunk_scan(sch.get_loops(sch.get_block("Y"))[1]); }, 4, "InvalidChunkLoop"},
      {"a row loop", cumsum,
       [](Schedule& sch) {
         std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
         sch.split(loops[1], {None{}, int64_t{4}});
         sch.chunk_scan(loops[0]);
       },
       4, "InvalidChunkLoop"},
      {"the inner part of the split", cumsum,
       [](Schedule& sch) {
         std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
         std::vector<LoopRV> parts = sch.split(loops[1], {None{}, int64_t{4}});
         sch.chunk_scan(parts[1]);
       },
       4, "InvalidChunkLoop"},
  };
  for (const ChunkScanErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Schedule sch(workload(c.spec));
    try {
      c.apply(sch);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::ChunkScan);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name) << e.what();
      EXPECT_TRUE(has_line(e.detail(), "  <-- here")) << e.detail();
    }
  }
}

}  // namespace
}  // namespace dragon::schedule
