// JSON lines of the tuning database: export -> import -> export gives the same bytes,
// importing twice stores once, filtered exports carry their workloads, samples keep float
// precision exactly, and malformed files are refused at their line.
#include <gtest/gtest.h>

#include <filesystem>

#include <cstring>
#include <random>
#include <sstream>

#include "dragon/db/jsonl.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

class JsonlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    matmul_ = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
    softmax_ = testing::workload_of_spec("softmax:shape=16x256,axis=1,dtype=f32");
    softmax_.spec.reset();  // a workload from IR text, not a spec
    scripts_ = testing::random_scripts(matmul_, 5, 2);
  }

  // A database with both workloads and varied records (every optional set and absent).
  Database filled(const std::string& name) {
    Database db = Database::open(dir_.file(name));
    db.add_workload(matmul_);
    db.add_workload(softmax_);
    std::mt19937_64 rng(5);
    std::vector<Record> batch;
    for (int i = 0; i < 40; ++i) {
      TuningKey key{i % 3 == 0 ? softmax_.hash : matmul_.hash, i % 2 ? testing::cuda_sm90a() : testing::cpu_x86(),
                    i % 5 ? testing::h200() : Hardware{"AMD EPYC 7B13", ""}};
      Record r = i % 4 == 3 ? testing::failed_record(key, "", RecordStatus::kCrashed, "signal 11 \"SEGV\"\n\tat ü")
                            : testing::ok_record(key, key.workload == matmul_.hash ? scripts_[i % 5] : "",
                                                 testing::random_samples(rng, 0.01 + i));
      if (i % 2) r.kernel_hash = "kh" + std::to_string(i);
      if (i % 3) r.commit = "992b90b";
      if (i % 7) r.measured_at = TimePoint(std::chrono::milliseconds(1'760'000'000'000 + i * 1013));
      r.origin = i % 6 ? "search" : "model";
      batch.push_back(std::move(r));
    }
    db.commit(batch);
    return db;
  }

  static std::string exported(const Database& db, const RecordFilter& filter = {}) {
    std::ostringstream out;
    export_jsonl(db, out, filter);
    return out.str();
  }

  TempDir dir_;
  Workload matmul_, softmax_;
  std::vector<std::string> scripts_;
};

TEST_F(JsonlTest, ExportImportExportIsByteIdentical) {
  Database source = filled("a.db");
  const std::string text = exported(source);
  EXPECT_EQ(text.substr(0, text.find('\n')), jsonl_header_line());

  Database copy = Database::open(dir_.file("b.db"));
  std::istringstream in(text);
  ImportSummary summary = import_jsonl(copy, in, "a.jsonl");
  EXPECT_EQ(summary.workloads_added, 2);
  EXPECT_EQ(summary.records_inserted, 40);
  EXPECT_EQ(summary.duplicates, 0);
  EXPECT_TRUE(summary.skipped.empty());
  EXPECT_EQ(exported(copy), text);
  EXPECT_EQ(copy.workloads(), source.workloads());
  std::vector<StoredRecord> a = source.records(), b = copy.records();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].record, b[i].record) << i;
}

TEST_F(JsonlTest, ImportingTwiceStoresOnce) {
  Database source = filled("a.db");
  const std::string file = dir_.file("a.jsonl");
  ExportSummary written = export_jsonl_file(source, file);
  EXPECT_EQ(written.workloads, 2);
  EXPECT_EQ(written.records, 40);
  Database copy = Database::open(dir_.file("b.db"));
  import_jsonl_file(copy, file);
  ImportSummary again = import_jsonl_file(copy, file);
  EXPECT_EQ(again.workloads_added, 0);
  EXPECT_EQ(again.records_inserted, 0);
  EXPECT_EQ(again.duplicates, 40);
  EXPECT_EQ(copy.count(), 40);
  // Into the source itself: nothing new either.
  EXPECT_EQ(import_jsonl_file(source, file).records_inserted, 0);
}

// A path ending in ".zst" is written and read zstd-compressed: the same lines, what
// `zstd -dc` reads, a file smaller than the plain one; a damaged one is an error naming it.
TEST_F(JsonlTest, ZstPathsAreCompressedTheSameRecords) {
  Database source = filled("a.db");
  const std::string plain = dir_.file("a.jsonl"), packed = dir_.file("a.jsonl.zst");
  export_jsonl_file(source, plain);
  ExportSummary written = export_jsonl_file(source, packed);
  EXPECT_EQ(written.records, 40);
  EXPECT_LT(std::filesystem::file_size(packed), std::filesystem::file_size(plain) / 2);
  Database copy = Database::open(dir_.file("b.db"));
  ImportSummary read = import_jsonl_file(copy, packed);
  EXPECT_EQ(read.workloads_added, 2);
  EXPECT_EQ(read.records_inserted, 40);
  EXPECT_EQ(exported(copy), exported(source));
  std::filesystem::resize_file(packed, std::filesystem::file_size(packed) / 2);
  try {
    import_jsonl_file(copy, packed);
    ADD_FAILURE() << "a truncated file was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a.jsonl.zst"), std::string::npos) << e.what();
  }
}

TEST_F(JsonlTest, AFilteredExportCarriesOnlyItsRecordsAndTheirWorkloads) {
  Database source = filled("a.db");
  RecordFilter model;
  model.origin = "model";
  model.workload = softmax_.hash;
  const std::string text = exported(source, model);
  Database copy = Database::open(dir_.file("b.db"));
  std::istringstream in(text);
  ImportSummary summary = import_jsonl(copy, in, "model.jsonl");
  EXPECT_EQ(summary.workloads_added, 1);
  EXPECT_EQ(copy.workloads(), std::vector<Workload>{softmax_});
  EXPECT_EQ(summary.records_inserted, source.count(model));
  EXPECT_GT(summary.records_inserted, 0);
  for (const StoredRecord& r : copy.records()) EXPECT_EQ(r.record.origin, "model");
}

// One machine kind's records, whatever its driver: what goes into bench/tuning/h100.jsonl.zst.zst
// and h200.jsonl from an export holding both.
TEST_F(JsonlTest, AnExportByDeviceCarriesThatDevicesRecordsOfEveryDriver) {
  Database source = filled("a.db");
  // The same device under another driver counts too.
  const Hardware other_driver{testing::h200().device, "999.99"};
  source.commit(testing::ok_record(TuningKey{softmax_.hash, testing::cuda_sm90a(), other_driver}, "", {1.0f}));
  RecordFilter h200;
  h200.device = testing::h200().device;
  const std::string text = exported(source, h200);
  Database copy = Database::open(dir_.file("b.db"));
  std::istringstream in(text);
  ImportSummary summary = import_jsonl(copy, in, "h200.jsonl");
  RecordFilter cpu;
  cpu.device = "AMD EPYC 7B13";
  EXPECT_EQ(summary.records_inserted + source.count(cpu), source.count()) << "every record is one device's or the other's";
  EXPECT_GT(source.count(cpu), 0);
  bool saw_other_driver = false;
  for (const StoredRecord& r : copy.records()) {
    EXPECT_EQ(r.record.key.hardware.device, testing::h200().device);
    saw_other_driver |= r.record.key.hardware.driver == "999.99";
  }
  EXPECT_TRUE(saw_other_driver);
  RecordFilter nowhere;
  nowhere.device = "no such GPU";
  EXPECT_EQ(source.count(nowhere), 0);
}

TEST_F(JsonlTest, SamplesKeepTheirFloatBitsExactly) {
  Database db = Database::open(dir_.file("a.db"));
  db.add_workload(matmul_);
  std::mt19937 rng(9);
  std::vector<Record> batch;
  for (int i = 0; i < 50; ++i) {
    Record r = testing::ok_record(TuningKey{matmul_.hash, testing::cuda_sm90a(), testing::h200()}, "", {});
    for (int k = 0; k < 20; ++k) {
      // Any positive finite float: random exponent and mantissa bits.
      uint32_t bits = (rng() & 0x007fffff) | (static_cast<uint32_t>(1 + rng() % 253) << 23);
      float value;
      std::memcpy(&value, &bits, sizeof value);
      r.samples_ms.push_back(value);
    }
    batch.push_back(std::move(r));
  }
  db.commit(batch);
  Database copy = Database::open(dir_.file("b.db"));
  std::istringstream in(exported(db));
  import_jsonl(copy, in, "samples.jsonl");
  std::vector<StoredRecord> back = copy.records();
  ASSERT_EQ(back.size(), batch.size());
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].record.samples_ms, batch[i].samples_ms) << i;
}

TEST_F(JsonlTest, MalformedFilesAreRefusedAtTheirLine) {
  const std::string header = jsonl_header_line() + "\n";
  const std::string workload = workload_to_json_line(matmul_) + "\n";
  Record good = testing::ok_record(TuningKey{matmul_.hash, testing::cuda_sm90a(), testing::h200()}, "", {1.0f});
  const std::string record = record_to_json_line(good);
  int cases = 0;
  auto refused = [&](const std::string& text, std::string_view expected) {
    Database db = Database::open(dir_.file("case" + std::to_string(++cases) + ".db"));
    std::istringstream in(text);
    try {
      import_jsonl(db, in, "in.jsonl");
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.count(), 0) << expected;
  };
  auto replace = [](std::string text, std::string_view from, std::string_view to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  refused("", "in.jsonl: empty");
  refused(workload, "in.jsonl:1: not a Little Dragon tuning-records file");
  refused(replace(header, "\"version\":1", "\"version\":2"), "in.jsonl:1: format version 2");
  refused(header + "\n" + workload + "{\"kind\":", "in.jsonl:4: not JSON");
  refused(header + "[1,2]\n", "in.jsonl:2: each line must be a JSON object");
  refused(header + record + "\n", "in.jsonl:2: workload " + format_workload_hash(matmul_.hash) +
                                      " is neither defined by an earlier line nor stored");
  refused(header + workload + replace(record, "\"status\":\"ok\"", "\"status\":\"fine\"") + "\n",
          "in.jsonl:3: unknown status 'fine'");
  refused(header + workload + replace(record, "\"origin\"", "\"color\":1,\"origin\"") + "\n",
          "in.jsonl:3: unknown field 'color'");
  refused(header + workload + replace(record, "\"samples_ms\":[1]", "\"samples_ms\":[]") + "\n",
          "in.jsonl:3: samples_ms: an ok record needs at least one latency sample");
  refused(header + workload + replace(record, "\"samples_ms\":[1]", "\"samples_ms\":\"1\"") + "\n",
          "in.jsonl:3: field 'samples_ms' must be an array of numbers");
  refused(header + workload + replace(record, "\"measured_at\":null", "\"measured_at\":\"now\"") + "\n",
          "in.jsonl:3: bad time 'now'");
  refused(header + replace(workload, "\"hash\":\"", "\"hash\":\"f") + "\n", "in.jsonl:2: bad workload hash");
  refused(header + replace(workload, "\"kind\":\"workload\"", "\"kind\":\"schedule\"") + "\n",
          "in.jsonl:2: unknown kind 'schedule'");
  Database db = Database::open(dir_.file("a.db"));
  EXPECT_THROW(import_jsonl_file(db, dir_.file("missing.jsonl")), UserError);
}

}  // namespace
}  // namespace dragon::db
