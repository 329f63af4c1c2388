// The tuning database in one process: records read back exactly, best-k agrees with a
// brute-force scan and is answered from the index, records never cross hardware, batches
// are all-or-nothing, bad records are refused naming the field.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "dragon/db/database.h"
#include "dragon/support/error.h"
#include "record_queries.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    matmul_ = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
    softmax_ = testing::workload_of_spec("softmax:shape=16x256,axis=1,dtype=f32");
    scripts_ = testing::random_scripts(matmul_, 6, 1);
  }

  TuningKey key(const Workload& w, Target t = testing::cuda_sm90a(), Hardware h = testing::h200()) {
    return TuningKey{w.hash, std::move(t), std::move(h)};
  }

  TempDir dir_;
  Workload matmul_, softmax_;
  std::vector<std::string> scripts_;
};

TEST_F(DatabaseTest, RecordsReadBackExactlyWithEveryFieldSetOrAbsent) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  Record full = testing::ok_record(key(matmul_), scripts_[1], {0.125f, 0.1251f, 0.13f});
  full.kernel_hash = "0123456789abcdef0123456789abcdef";
  full.commit = "992b90b";
  full.measured_at = parse_time("2026-12-03T14:05:06.123Z");
  full.origin = "expert";
  Record failed = testing::failed_record(key(matmul_, testing::cpu_x86(), Hardware{"AMD EPYC 7B13", ""}), scripts_[2],
                                         RecordStatus::kBuildFailed, "nvrtc: error: \"x\" undefined\n\tline 2 — ü");
  Record bare = testing::ok_record(key(matmul_), "", {1.0f});
  const std::vector<Record> batch = {full, failed, bare};
  CommitSummary summary = db.commit(batch);
  EXPECT_EQ(summary.inserted, 3);
  EXPECT_EQ(summary.duplicates, 0);

  std::vector<StoredRecord> back = db.records();
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].record, batch[i]) << i;
    if (i > 0) {
      EXPECT_GT(back[i].id, back[i - 1].id);
    }
  }
  std::optional<Workload> w = db.find_workload(matmul_.hash);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, matmul_);
  EXPECT_FALSE(db.find_workload(softmax_.hash).has_value());

  // Reopened: the same.
  Database again = Database::open(dir_.file("t.db"), OpenOptions{.read_only = true});
  std::vector<StoredRecord> reread = again.records();
  ASSERT_EQ(reread.size(), 3u);
  EXPECT_EQ(reread[2].record, bare);
}

TEST_F(DatabaseTest, TopKMatchesABruteForceScanAndNeverCrossesKeys) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.add_workload(softmax_);
  const std::vector<TuningKey> keys = {
      key(matmul_), key(matmul_, testing::cuda_sm90a(), testing::other_gpu()),
      key(matmul_, testing::cuda_sm90a(), Hardware{"NVIDIA H200", "570.00"}),  // same GPU, other driver
      key(matmul_, testing::cpu_x86(), Hardware{"AMD EPYC 7B13", ""}), key(softmax_)};
  std::mt19937_64 rng(7);
  std::vector<Record> all;
  for (int i = 0; i < 3000; ++i) {
    const TuningKey& k = keys[rng() % keys.size()];
    const std::string& script = scripts_[rng() % scripts_.size()];
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 7) {
      // Few distinct centres, so medians tie often and the tie rule is exercised.
      all.push_back(testing::ok_record(k, script, testing::random_samples(rng, 0.5 + (rng() % 20) * 0.25)));
      if (rng() % 4 == 0) all.back().samples_ms = {static_cast<float>(1 + rng() % 3)};
    } else {
      all.push_back(testing::failed_record(k, script, kind == 7 ? RecordStatus::kWrongResult : RecordStatus::kTimedOut,
                                           "failed " + std::to_string(i)));
    }
    // Distinct measurement times keep every record distinct (identical ones are stored once).
    all.back().measured_at = TimePoint(std::chrono::milliseconds(1'700'000'000'000 + i));
  }
  for (size_t start = 0; start < all.size(); start += 250) {
    db.commit(std::span<const Record>(all).subspan(start, std::min<size_t>(250, all.size() - start)));
  }
  const std::vector<StoredRecord> stored = db.records();
  ASSERT_EQ(stored.size(), all.size());

  for (const TuningKey& k : keys) {
    std::vector<StoredRecord> expected;
    for (const StoredRecord& r : stored) {
      if (r.record.key == k && r.record.status == RecordStatus::kOk) expected.push_back(r);
    }
    std::stable_sort(expected.begin(), expected.end(), [](const StoredRecord& a, const StoredRecord& b) {
      return *a.record.median_ms() < *b.record.median_ms();
    });
    for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{37}, static_cast<int64_t>(expected.size()) + 10}) {
      std::vector<StoredRecord> got = db.top_k(k, n);
      ASSERT_EQ(got.size(), std::min<size_t>(n, expected.size())) << k.hardware.describe();
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, expected[i].id) << "rank " << i << " of " << k.hardware.describe();
        EXPECT_EQ(got[i].record, expected[i].record);
      }
    }
    std::optional<StoredRecord> best = db.best(k);
    ASSERT_EQ(best.has_value(), !expected.empty());
    if (best) {
      EXPECT_EQ(best->id, expected.front().id);
    }
    EXPECT_EQ(db.count(RecordFilter::of(k)),
              std::count_if(stored.begin(), stored.end(), [&](const StoredRecord& r) { return r.record.key == k; }));
  }
  // Hardware, target or workload never seen: nothing.
  EXPECT_TRUE(db.top_k(key(matmul_, testing::cuda_sm90a(), Hardware{"NVIDIA H100", "580.65.06"}), 5).empty());
  EXPECT_FALSE(db.best(key(matmul_, Target{"cuda", "sm_80"})).has_value());
  EXPECT_TRUE(db.top_k(key(matmul_), 0).empty());
}

// The default schedule's records (script "") are left out of best_script, however many
// there are and however fast: they stand for an older default, not a script to replay.
TEST_F(DatabaseTest, BestScriptSkipsTheDefaultScheduleRecords) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  const TuningKey k = key(matmul_);
  std::vector<Record> batch;
  for (int i = 0; i < 20; ++i) {
    batch.push_back(testing::ok_record(k, "", {static_cast<float>(0.1 + 0.01 * i)}));  // old defaults, fastest
    batch.back().measured_at = TimePoint(std::chrono::milliseconds(1'700'000'000'000 + i));
  }
  EXPECT_FALSE(db.best_script(k).has_value()) << "only default records yet";
  db.commit(batch);
  EXPECT_FALSE(db.best_script(k).has_value());
  ASSERT_TRUE(db.best(k).has_value());
  EXPECT_TRUE(db.best(k)->record.script.empty());
  ASSERT_TRUE(scripts_[0].empty() && !scripts_[1].empty() && !scripts_[2].empty());
  db.commit(testing::ok_record(k, scripts_[1], {3.0f}));
  db.commit(testing::ok_record(k, scripts_[2], {2.0f}));
  std::optional<StoredRecord> tuned = db.best_script(k);
  ASSERT_TRUE(tuned.has_value());
  EXPECT_EQ(tuned->record.script, scripts_[2]);
  EXPECT_FALSE(db.best_script(key(softmax_)).has_value());
}

// best_script_within(key, n): the best of the records of the first n distinct scripts in
// commit order, a script measured again counting once, defaults and failures counting
// for nothing; other keys' records are not counted.
TEST_F(DatabaseTest, BestScriptWithinCountsTheFirstDistinctScripts) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.add_workload(softmax_);
  const TuningKey k = key(matmul_);
  std::vector<std::string> scripts;
  for (const std::string& s : scripts_) {
    if (!s.empty() && std::find(scripts.begin(), scripts.end(), s) == scripts.end()) scripts.push_back(s);
  }
  ASSERT_GE(scripts.size(), 4u);
  EXPECT_FALSE(db.best_script_within(k, 2).has_value());
  db.commit(testing::ok_record(k, "", {0.5f}));                        // the default: not a trial
  db.commit(testing::ok_record(key(softmax_), scripts[3], {0.1f}));    // another workload's
  db.commit(testing::ok_record(k, scripts[0], {4.0f}));                // trial 1
  db.commit(testing::failed_record(k, scripts[1], RecordStatus::kCrashed, "illegal address"));  // trial 2
  db.commit(testing::ok_record(k, scripts[2], {1.0f}));                // trial 3
  db.commit(testing::ok_record(k, scripts[0], {3.0f}));                // trial 1, measured again
  db.commit(testing::ok_record(k, scripts[3], {2.0f}));                // trial 4
  ASSERT_TRUE(db.best_script_within(k, 1).has_value());
  EXPECT_EQ(db.best_script_within(k, 1)->record.script, scripts[0]);
  EXPECT_DOUBLE_EQ(*db.best_script_within(k, 1)->record.median_ms(), 3.0);
  EXPECT_DOUBLE_EQ(*db.best_script_within(k, 2)->record.median_ms(), 3.0);
  EXPECT_EQ(db.best_script_within(k, 3)->record.script, scripts[2]);
  EXPECT_EQ(db.best_script_within(k, 100)->record.script, db.best_script(k)->record.script);
  EXPECT_THROW(db.best_script_within(k, 0), UserError);
}

TEST_F(DatabaseTest, TopKIsAnIndexQueryWithoutASort) {
  {
    Database db = Database::open(dir_.file("t.db"));  // creates the schema
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir_.file("t.db").c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const std::string sql =
      "EXPLAIN QUERY PLAN " + std::string(queries::kRecordSelect) + std::string(queries::kTopKWhere);
  sqlite3_stmt* plan = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &plan, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_bind_int64(plan, 1, 1);
  sqlite3_bind_int64(plan, 2, 1);
  sqlite3_bind_int64(plan, 3, 1);
  sqlite3_bind_int64(plan, 4, 10);
  std::string steps;
  while (sqlite3_step(plan) == SQLITE_ROW) steps += std::string(reinterpret_cast<const char*>(sqlite3_column_text(plan, 3))) + "\n";
  sqlite3_finalize(plan);
  sqlite3_close(raw);
  EXPECT_NE(steps.find("SEARCH r USING INDEX records_by_key (workload=? AND target=? AND hardware=? AND status=?)"),
            std::string::npos)
      << steps;
  EXPECT_EQ(steps.find("TEMP B-TREE"), std::string::npos) << "best-k must not sort:\n" << steps;
}

TEST_F(DatabaseTest, FindKernelAnswersMeasuredAlreadyPerKey) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  Record first = testing::failed_record(key(matmul_), scripts_[1], RecordStatus::kCrashed, "illegal address");
  first.kernel_hash = "k1";
  Record second = testing::ok_record(key(matmul_), scripts_[1], {0.5f});
  second.kernel_hash = "k1";
  Record elsewhere = testing::ok_record(key(matmul_, testing::cuda_sm90a(), testing::other_gpu()), scripts_[2], {0.5f});
  elsewhere.kernel_hash = "k2";
  db.commit(std::vector<Record>{first, second, elsewhere});
  std::optional<StoredRecord> found = db.find_kernel(key(matmul_), "k1");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->record, second) << "the latest record of the kernel";
  EXPECT_FALSE(db.find_kernel(key(matmul_), "k2").has_value()) << "k2 was measured on another GPU only";
  EXPECT_FALSE(db.find_kernel(key(matmul_), "k3").has_value());
  EXPECT_TRUE(db.find_kernel(key(matmul_, testing::cuda_sm90a(), testing::other_gpu()), "k2").has_value());
}

TEST_F(DatabaseTest, IdenticalRecordsAreStoredOnce) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  std::vector<Record> batch = {testing::ok_record(key(matmul_), scripts_[1], {1.0f, 2.0f}),
                               testing::ok_record(key(matmul_), scripts_[1], {1.0f, 2.0f})};
  CommitSummary first = db.commit(batch);
  EXPECT_EQ(first.inserted, 1);
  EXPECT_EQ(first.duplicates, 1);
  batch[1].samples_ms = {1.0f, 2.5f};  // a different measurement is a different record
  CommitSummary second = db.commit(batch);
  EXPECT_EQ(second.inserted, 1);
  EXPECT_EQ(second.duplicates, 1);
  EXPECT_EQ(db.count(), 2);
}

TEST_F(DatabaseTest, ABatchIsAllOrNothing) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.commit(testing::ok_record(key(matmul_), "", {1.0f}));
  // An unknown workload is found inside the transaction, after rows were inserted.
  std::vector<Record> batch = {testing::ok_record(key(matmul_), scripts_[1], {1.0f}),
                               testing::ok_record(key(matmul_, Target{"cuda", "sm_80"}), scripts_[2], {1.0f}),
                               testing::ok_record(key(softmax_), "", {1.0f})};
  try {
    db.commit(batch);
    FAIL() << "a record of an unknown workload must be refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("record 2 of the batch: workload " + format_workload_hash(softmax_.hash)),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(db.count(), 1);
  EXPECT_TRUE(db.top_k(key(matmul_, Target{"cuda", "sm_80"}), 1).empty());
  // The connection is usable after the rollback.
  batch.pop_back();
  EXPECT_EQ(db.commit(batch).inserted, 2);
}

TEST_F(DatabaseTest, BadRecordsAreRefusedNamingTheField) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  const Record good = testing::ok_record(key(matmul_), scripts_[1], {1.0f});
  auto refused = [&](Record bad, std::string_view expected) {
    std::vector<Record> batch = {good, std::move(bad)};
    try {
      db.commit(batch);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  Record r = good;
  r.samples_ms.clear();
  refused(r, "record 1 of the batch: samples_ms: an ok record needs at least one latency sample");
  r = good;
  r.error = "why";
  refused(r, "error: an ok record has no error");
  r = testing::failed_record(key(matmul_), "", RecordStatus::kRejected, "x");
  r.error.reset();
  refused(r, "error: a rejected record needs the reason it failed");
  r = good;
  r.samples_ms = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  refused(r, "samples_ms[1]");
  r.samples_ms = {0.0f};
  refused(r, "samples_ms[0]: 0 is not a positive finite time");
  r = good;
  r.script = scripts_[1] + "# a comment\n";
  refused(r, "script: is not in canonical form");
  r.script = "not a script\n";
  refused(r, "script: line 1:");
  r = good;
  r.origin = "";
  refused(r, "origin: is empty");
  r = good;
  r.key.hardware.device = "";
  refused(r, "hardware.device: is empty");
  r = good;
  r.commit = "";
  refused(r, "commit: is present but empty");
  r = good;
  r.kernel_hash = std::string("\xff\xfe", 2);
  refused(r, "kernel_hash: is not valid UTF-8");
  EXPECT_EQ(db.count(), 0) << "nothing of a refused batch is stored";
}

TEST_F(DatabaseTest, WorkloadsAreAddedOnceAndChecked) {
  Database db = Database::open(dir_.file("t.db"));
  Workload no_spec = matmul_;
  no_spec.spec.reset();
  db.add_workload(no_spec);
  db.add_workload(no_spec);
  EXPECT_FALSE(db.find_workload(matmul_.hash)->spec.has_value());
  db.add_workload(matmul_);  // the spec is learned later
  EXPECT_EQ(db.find_workload(matmul_.hash)->spec, matmul_.spec);
  db.add_workload(softmax_);
  std::vector<Workload> all = db.workloads();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], matmul_);
  EXPECT_EQ(all[1], softmax_);

  Workload lying = softmax_;
  lying.hash = matmul_.hash;
  EXPECT_THROW(
      {
        try {
          db.add_workload(lying);
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("is not the structural hash of its IR"), std::string::npos) << e.what();
          throw;
        }
      },
      UserError);
  Workload garbled = matmul_;
  garbled.ir += "garbage";
  EXPECT_THROW(db.add_workload(garbled), UserError);
}

TEST_F(DatabaseTest, FiltersKeysAndStats) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.add_workload(softmax_);
  std::vector<Record> batch = {
      testing::ok_record(key(matmul_), "", {1.0f}),
      testing::ok_record(key(matmul_), scripts_[1], {0.5f}),
      testing::failed_record(key(matmul_), scripts_[2], RecordStatus::kApplyFailed, "no such block"),
      testing::ok_record(key(softmax_, testing::cuda_sm90a(), testing::other_gpu()), "", {2.0f}),
  };
  batch[1].origin = "model";
  db.commit(batch);
  RecordFilter model;
  model.origin = "model";
  ASSERT_EQ(db.records(model).size(), 1u);
  EXPECT_EQ(db.records(model)[0].record, batch[1]);
  RecordFilter failed;
  failed.status = RecordStatus::kApplyFailed;
  failed.workload = matmul_.hash;
  EXPECT_EQ(db.count(failed), 1);
  RecordFilter unknown_target;
  unknown_target.target = Target{"rocm", "gfx942"};
  EXPECT_EQ(db.count(unknown_target), 0);
  EXPECT_EQ(db.count(), 4);

  std::vector<TuningKey> keys = db.keys();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0], key(matmul_));
  EXPECT_EQ(keys[1], key(softmax_, testing::cuda_sm90a(), testing::other_gpu()));

  DatabaseStats stats = db.stats();
  EXPECT_EQ(stats.workloads, 2);
  EXPECT_EQ(stats.records, 4);
  EXPECT_EQ(stats.schema_version, kSchemaVersion);
  EXPECT_EQ(stats.by_status[RecordStatus::kOk], 3);
  EXPECT_EQ(stats.by_status[RecordStatus::kApplyFailed], 1);
  EXPECT_EQ(stats.by_origin["search"], 3);
  EXPECT_EQ(stats.by_origin["model"], 1);
  ASSERT_EQ(stats.by_target_hardware.size(), 2u);
  EXPECT_EQ(stats.by_target_hardware[0].hardware, testing::other_gpu());  // "NVIDIA A100..." < "NVIDIA H200"
  EXPECT_EQ(stats.by_target_hardware[1].records, 3);
  EXPECT_EQ(stats.by_target_hardware[1].ok, 2);
  EXPECT_EQ(stats.by_target_hardware[1].workloads, 1);
  EXPECT_TRUE(db.integrity_problems().empty());
}

TEST_F(DatabaseTest, ReadOnlyOpensNeverWrite) {
  const std::string path = dir_.file("t.db");
  EXPECT_THROW(Database::open(path, OpenOptions{.read_only = true}), UserError);
  EXPECT_FALSE(std::filesystem::exists(path));
  { Database::open(path).add_workload(matmul_); }
  Database db = Database::open(path, OpenOptions{.read_only = true});
  EXPECT_EQ(db.workloads().size(), 1u);
  try {
    db.commit(testing::ok_record(key(matmul_), "", {1.0f}));
    FAIL() << "a read-only database accepted a commit";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
}

TEST_F(DatabaseTest, ForEachRecordMayQueryTheDatabaseAgain) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.commit(std::vector<Record>{testing::ok_record(key(matmul_), "", {1.0f}),
                                testing::ok_record(key(matmul_), scripts_[1], {0.5f})});
  int visited = 0;
  db.for_each_record({}, [&](const StoredRecord& r) {
    ++visited;
    EXPECT_EQ(db.best(r.record.key)->record.script, scripts_[1]);
  });
  EXPECT_EQ(visited, 2);
}

}  // namespace
}  // namespace dragon::db
