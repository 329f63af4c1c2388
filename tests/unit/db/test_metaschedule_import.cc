// Import of a MetaSchedule JSONDatabase: the hand-written fixture in metaschedule/ (its
// README says what each line is for) becomes records whose compact scripts are the TVM
// traces through our trace import, replay on our workload exactly as the TVM JSON does,
// and carry the run times in milliseconds; failures, unmapped workloads and traces we
// cannot replay are reported, and importing twice stores once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dragon/db/metaschedule_import.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

const std::string kFixture = std::string(DRAGON_SOURCE_DIR) + "/tests/unit/db/metaschedule";
const std::string kMatmulTvmHash = "13791209148562378501";

class MetaScheduleImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    matmul_ = testing::workload_of_spec("matmul:m=64,n=64,k=64,dtype=f32");
    options_.workloads[kMatmulTvmHash] = matmul_;
    options_.hardware = testing::h200();
  }

  // The TVM JSON trace of fixture record line `line` (1-based), as text.
  static std::string fixture_trace(int line) {
    std::ifstream in(kFixture + "/database_tuning_record.json");
    std::string text;
    for (int i = 0; i < line; ++i) std::getline(in, text);
    // [index,[TRACE,run_secs,...]]: the trace is the first element of the inner list.
    const size_t start = text.find("[[[[");
    int depth = 0;
    for (size_t i = start + 1; i < text.size(); ++i) {
      depth += text[i] == '[' ? 1 : text[i] == ']' ? -1 : 0;
      if (depth == 0) return text.substr(start + 1, i - start);
    }
    return "";
  }

  TempDir dir_;
  Workload matmul_;
  MetaScheduleImportOptions options_;
};

TEST_F(MetaScheduleImportTest, ImportsTheFixtureThroughTheTvmTraceImport) {
  Database db = Database::open(dir_.file("t.db"));
  ImportSummary summary = import_metaschedule(db, kFixture, options_);
  EXPECT_EQ(summary.workloads_added, 1);
  EXPECT_EQ(summary.records_inserted, 5);
  EXPECT_EQ(summary.duplicates, 0);
  ASSERT_EQ(summary.skipped.size(), 3u) << ::testing::PrintToString(summary.skipped);
  EXPECT_NE(summary.skipped[0].find("database_tuning_record.json:5: the trace does not replay on workload"),
            std::string::npos)
      << summary.skipped[0];
  EXPECT_NE(summary.skipped[1].find("database_tuning_record.json:8: the trace does not convert"), std::string::npos)
      << summary.skipped[1];
  EXPECT_NE(summary.skipped[2].find("TVM workload 1 (structural hash 2267044720391133017): no workload given for it, "
                                    "1 records skipped"),
            std::string::npos)
      << summary.skipped[2];

  const std::vector<StoredRecord> records = db.records();
  ASSERT_EQ(records.size(), 5u);
  const TuningKey gpu{matmul_.hash, testing::cuda_sm90a(), testing::h200()};
  // Lines 1-4 and 7, in file order.
  const int lines[] = {1, 2, 3, 4, 7};
  const ir::PrimFunc func = matmul_.function();
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i].record;
    EXPECT_EQ(r.origin, "import");
    EXPECT_EQ(r.key.hardware, testing::h200());
    EXPECT_FALSE(r.commit.has_value());
    EXPECT_FALSE(r.measured_at.has_value());
    // The script is the TVM trace through trace_from_json, and replays to the same function.
    const schedule::Trace tvm = schedule::trace_from_json(fixture_trace(lines[i]));
    EXPECT_EQ(script::decode(r.script), schedule::replay(tvm, func).trace()) << "line " << lines[i];
    EXPECT_TRUE(ir::structural_equal(schedule::replay(script::decode(r.script), func).func(),
                                     schedule::replay(tvm, func).func()))
        << "line " << lines[i];
  }
  EXPECT_EQ(records[0].record.key, gpu);
  EXPECT_EQ(records[0].record.status, RecordStatus::kOk);
  EXPECT_EQ(records[0].record.samples_ms, (std::vector<float>{0.0231f, 0.0229f, 0.0235f}));
  EXPECT_EQ(records[1].record.samples_ms, (std::vector<float>{0.019f, 0.021f, 0.020f, 0.0195f}));
  EXPECT_EQ(records[2].record.status, RecordStatus::kRunFailed);
  EXPECT_NE(records[2].record.error->find("run_secs is null"), std::string::npos);
  EXPECT_EQ(records[3].record.status, RecordStatus::kRunFailed);
  EXPECT_NE(records[3].record.error->find("1e+10"), std::string::npos) << *records[3].record.error;
  EXPECT_EQ(records[4].record.key.target, (Target{"cpu", "skylake-avx512"}));
  EXPECT_EQ(records[4].record.status, RecordStatus::kOk);

  // The decisions came through: line 2's tiles, and it is the best.
  std::optional<StoredRecord> best = db.best(gpu);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->id, records[1].id);
  const schedule::Trace trace = script::decode(best->record.script);
  EXPECT_EQ(trace.decision(2), schedule::Arg::int_list({16, 4}));
  EXPECT_EQ(trace.decision(4), schedule::Arg::int_list({2, 32}));

  ImportSummary again = import_metaschedule(db, kFixture, options_);
  EXPECT_EQ(again.records_inserted, 0);
  EXPECT_EQ(again.duplicates, 5);
  EXPECT_EQ(db.count(), 5);
}

TEST_F(MetaScheduleImportTest, AnExplicitTargetAndADefaultWorkload) {
  Database db = Database::open(dir_.file("t.db"));
  options_.workloads.clear();
  options_.default_workload = matmul_;  // both TVM workloads are this one
  options_.target = Target{"cuda", "sm_90"};
  options_.origin = "metaschedule";
  ImportSummary summary = import_metaschedule(db, kFixture, options_);
  // Line 6 now imports; line 7's CPU trace is filed under the given target too.
  EXPECT_EQ(summary.records_inserted, 6);
  ASSERT_EQ(summary.skipped.size(), 2u);
  for (const StoredRecord& r : db.records()) {
    EXPECT_EQ(r.record.key.target, (Target{"cuda", "sm_90"}));
    EXPECT_EQ(r.record.origin, "metaschedule");
  }
}

TEST_F(MetaScheduleImportTest, BadDirectoriesAndLinesAreUserErrors) {
  Database db = Database::open(dir_.file("t.db"));
  auto refused = [&](const std::string& directory, const MetaScheduleImportOptions& options,
                     std::string_view expected) {
    try {
      import_metaschedule(db, directory, options);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused(dir_.file("nowhere"), options_, dir_.file("nowhere") + "/database_workload.json");
  MetaScheduleImportOptions no_device = options_;
  no_device.hardware = {};
  refused(kFixture, no_device, "needs the device");

  const std::string broken = dir_.file("broken");
  std::filesystem::create_directories(broken);
  std::filesystem::copy_file(kFixture + "/database_workload.json", broken + "/database_workload.json");
  write_text_file(broken + "/database_tuning_record.json", "[0,[[[],[]],[1e-05],null,null]]\n[0,[1,2]\n");
  refused(broken, options_, "database_tuning_record.json:1: the record has no target");
  write_text_file(broken + "/database_tuning_record.json", "[7,[[[],[]],[1e-05],null,null]]\n");
  refused(broken, options_, "database_tuning_record.json:1: workload index 7 is not a line of");
  write_text_file(broken + "/database_tuning_record.json", "[0,[[[],[]],[1e-05],null]]\n");
  refused(broken, options_, "database_tuning_record.json:1: expected [workload index, [trace, run_secs");
  write_text_file(broken + "/database_tuning_record.json", "\n\n[0,\n");
  refused(broken, options_, "database_tuning_record.json:3: not JSON");
  write_text_file(broken + "/database_workload.json", "[\"1\"]\n");
  refused(broken, options_, "database_workload.json:1: expected [\"structural hash\", \"base64 module\"]");
  EXPECT_EQ(db.count(), 0);
}

}  // namespace
}  // namespace dragon::db
