// Shards written from a tuning database of synthetic records (data/dataset_builder.h's
// write_shard) and checked (data/dataset_check.h): the counts are the mining rules'; runs
// of different shards combine into one manifest; a damaged line, script, hash or count is
// found and named by file and line; one directory holds one data set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/data/dataset_builder.h"
#include "dragon/data/dataset_check.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::data {
namespace {

const db::Target kTarget{"cpu", "x86-64"};
const db::Hardware kHardware{"test cpu", ""};

std::vector<float> tight(double ms) { return std::vector<float>(8, static_cast<float>(ms)); }

class DataSet : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string specs = dir_.file("specs.txt");
    std::ofstream(specs) << "matmul:m=32,n=32,k=32\n"
                            "# a comment\n"
                            "softmax:shape=16x256\n"
                            "matmul:m=16,n=48,k=32\n"
                            "matmul:m=8,n=8,k=8\n";
    corpus_ = corpus_from_spec_file(specs);
    ASSERT_EQ(corpus_.entries.size(), 4u);
    database_.emplace(db::Database::open(dir_.file("tune.db")));
    for (size_t i = 0; i < corpus_.entries.size(); ++i) {
      const CorpusEntry& entry = corpus_.entries[i];
      db::Workload w = db::testing::workload_of_spec(entry.spec);
      ASSERT_EQ(w.hash, entry.hash);
      database_->add_workload(w);
      const db::TuningKey key{entry.hash, kTarget, kHardware};
      std::vector<std::string> scripts = db::testing::random_scripts(w, 5, 11 + i);
      std::vector<db::Record> records;
      // The last workload's default schedule is its best: no example.
      const bool default_best = i + 1 == corpus_.entries.size();
      records.push_back(db::testing::ok_record(key, "", tight(default_best ? 0.5 : 4.0)));
      records.push_back(db::testing::ok_record(key, scripts[1], tight(1.0)));
      records.push_back(db::testing::ok_record(key, scripts[2], tight(2.0)));   // 2x: a refinement
      records.push_back(db::testing::ok_record(key, scripts[3], tight(3.5)));   // 3.5x: a refinement
      records.push_back(db::testing::ok_record(key, scripts[4], tight(1.1)));   // 1.1x: too close
      records.push_back(db::testing::failed_record(key, scripts[4], db::RecordStatus::kBuildFailed, "nvrtc"));
      // A record under other hardware is never mined here.
      records.push_back(db::testing::ok_record({entry.hash, kTarget, {"other cpu", ""}}, scripts[3], tight(0.1)));
      database_->commit(records);
    }
  }

  ShardSummary header(int64_t index, int64_t count) const {
    ShardSummary h;
    h.index = index;
    h.count = count;
    h.corpus = corpus_.name;
    h.target = kTarget;
    h.hardware = kHardware;
    h.commit = "abc123";
    h.built_at = "2026-12-05T00:00:00.000Z";
    h.trials_per_workload = 4;
    return h;
  }

  std::string out() const { return dir_.file("set"); }
  std::string shard_path(int64_t index, int64_t count) const { return out() + "/" + shard_file_name(index, count); }

  std::string check_error() const {
    try {
      check_dataset(out());
    } catch (const UserError& e) {
      return e.what();
    }
    return "(no error)";
  }

  // Rewrites line `number` (1-based) of shard 0 of 1 through `edit`.
  void edit_line(int number, const std::function<void(nlohmann::ordered_json&)>& edit) {
    std::vector<std::string> lines = support::read_compressed_jsonl(shard_path(0, 1));
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(lines.at(static_cast<size_t>(number - 1)));
    edit(j);
    lines[static_cast<size_t>(number - 1)] = j.dump();
    support::write_compressed_jsonl(shard_path(0, 1), lines);
  }

  db::testing::TempDir dir_;
  Corpus corpus_;
  std::optional<db::Database> database_;
};

TEST_F(DataSet, AShardHoldsWhatTheRulesMineAndPassesTheCheck) {
  ShardSummary s = write_shard(corpus_.entries, *database_, header(0, 1), out());
  EXPECT_EQ(s.workloads, 4);
  EXPECT_EQ(s.tuned, 4);
  EXPECT_EQ(s.with_examples, 3);
  EXPECT_EQ(s.default_best, 1);
  EXPECT_EQ(s.no_ok_record, 0);
  EXPECT_EQ(s.by_kind().construction, 3);
  EXPECT_EQ(s.by_kind().refinement, 6);
  EXPECT_EQ(s.examples.at(Split::kTrain).total(), 9);
  EXPECT_EQ(s.refinements_in_range, 6);
  EXPECT_EQ(s.tokens.examples, 9);
  EXPECT_GT(s.tokens.max, 0);
  EXPECT_GE(s.tokens.max * 9, s.tokens.total);

  const std::vector<std::string> lines = support::read_compressed_jsonl(shard_path(0, 1));
  ASSERT_EQ(lines.size(), 9u);
  // In entry order: a construction, then its refinements.
  EXPECT_EQ(parse_example_line(lines[0], "x", 1).kind, ExampleKind::kConstruction);
  EXPECT_EQ(parse_example_line(lines[1], "x", 2).kind, ExampleKind::kRefinement);
  for (size_t i = 0; i < lines.size(); ++i) {
    Example e = parse_example_line(lines[i], "x", static_cast<int>(i + 1));
    EXPECT_LT(e.target_latency.median_ms, 1.5) << "the target is the best record under this hardware, not another's";
  }

  CheckReport report = check_dataset(out());
  EXPECT_EQ(report.shards, 1);
  EXPECT_EQ(report.examples, 9);
  EXPECT_EQ(report.scripts, 15);
  EXPECT_EQ(report.manifest.totals().example_count(), 9);
  EXPECT_EQ(report.manifest.shards.at(0).commit, "abc123");

  // Written again from the same records: the same bytes of lines.
  write_shard(corpus_.entries, *database_, header(0, 1), out());
  EXPECT_EQ(support::read_compressed_jsonl(shard_path(0, 1)), lines);
}

TEST_F(DataSet, ShardsWrittenSeparatelyCombineInTheManifest) {
  int64_t examples = 0;
  for (int64_t k = 0; k < 2; ++k) {
    examples += write_shard(shard_of(corpus_, k, 2), *database_, header(k, 2), out()).example_count();
    Manifest m = read_manifest(out());
    EXPECT_EQ(static_cast<int64_t>(m.shards.size()), k + 1) << "the manifest lists the shards present so far";
    EXPECT_EQ(m.shard_count, 2);
  }
  EXPECT_EQ(examples, 9);
  CheckReport report = check_dataset(out());
  EXPECT_EQ(report.shards, 2);
  EXPECT_EQ(report.manifest.totals().example_count(), 9);
  EXPECT_EQ(report.manifest.totals().workloads, 4);
  EXPECT_NE(describe(report.manifest).find("shards: 2 of 2 present"), std::string::npos) << describe(report.manifest);

  // A shard of another split of the corpus does not belong in this directory.
  EXPECT_THROW(write_shard(shard_of(corpus_, 0, 3), *database_, header(0, 3), out()), UserError);
  EXPECT_FALSE(std::filesystem::exists(shard_path(0, 3)));
}

TEST_F(DataSet, DamageIsFoundAndNamedByFileAndLine) {
  write_shard(corpus_.entries, *database_, header(0, 1), out());
  const std::vector<std::string> good = support::read_compressed_jsonl(shard_path(0, 1));
  auto restore = [&] { support::write_compressed_jsonl(shard_path(0, 1), good); };
  ASSERT_EQ(check_error(), "(no error)");

  edit_line(2, [](auto& j) { j["hash"] = "0123456789abcdef"; });
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst:2: workload"), std::string::npos) << check_error();
  EXPECT_NE(check_error().find("rebuilds to hash"), std::string::npos) << check_error();
  restore();

  edit_line(3, [](auto& j) { j["script"] = j["script"].template get<std::string>() + "# a comment\n"; });
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst:3: 'script' is not canonical"), std::string::npos)
      << check_error();
  restore();

  edit_line(2, [](auto& j) { j["existing_script"] = "no such instruction\n"; });
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst:2: 'existing_script' does not decode"), std::string::npos)
      << check_error();
  restore();

  edit_line(1, [](auto& j) { j["workload"] = "matmul:m=33,n=32,k=32"; });
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst:1: workload 'matmul:m=33,n=32,k=32' rebuilds to hash"),
            std::string::npos)
      << check_error();
  restore();

  edit_line(4, [](auto& j) { j["split"] = "validation"; });
  EXPECT_NE(check_error().find("the manifest says"), std::string::npos) << check_error();
  restore();

  edit_line(5, [](auto& j) { j.erase("target_latency"); });
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst:5: missing 'target_latency'"), std::string::npos)
      << check_error();
  restore();

  std::vector<std::string> fewer(good.begin(), good.end() - 1);
  support::write_compressed_jsonl(shard_path(0, 1), fewer);
  EXPECT_NE(check_error().find("the manifest says"), std::string::npos) << check_error();
  restore();

  std::filesystem::resize_file(shard_path(0, 1), std::filesystem::file_size(shard_path(0, 1)) - 3);
  EXPECT_NE(check_error().find("shard-0-of-1.jsonl.zst: "), std::string::npos) << check_error();
  restore();

  ASSERT_EQ(check_error(), "(no error)");
  std::filesystem::remove(shard_path(0, 1));
  EXPECT_NE(check_error().find("listed in"), std::string::npos) << check_error();
  restore();

  support::write_compressed_jsonl(shard_path(1, 2), {});
  EXPECT_NE(check_error().find("does not list shard-1-of-2.jsonl.zst"), std::string::npos) << check_error();
}

TEST_F(DataSet, OneDirectoryHoldsOneDataSet) {
  write_shard(corpus_.entries, *database_, header(0, 1), out());
  const std::vector<std::string> lines = support::read_compressed_jsonl(shard_path(0, 1));

  // Another machine's shard is refused before anything is written.
  ShardSummary other = header(0, 1);
  other.hardware = {"other cpu", ""};
  try {
    write_shard(corpus_.entries, *database_, other, out());
    ADD_FAILURE() << "a shard of other hardware was written";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("one directory holds one data set"), std::string::npos) << e.what();
  }
  EXPECT_EQ(support::read_compressed_jsonl(shard_path(0, 1)), lines) << "the shard there is untouched";
  EXPECT_EQ(check_error(), "(no error)");

  // A summary of another sharding found in the directory stops the manifest's rebuild.
  write_shard_summary(out(), header(1, 2));
  EXPECT_THROW(rebuild_manifest(out()), UserError);
  EXPECT_THROW(read_manifest(dir_.file("nowhere")), UserError);
}

}  // namespace
}  // namespace dragon::data
