// `dragon data build` and `dragon data stats` on the CPU end to end, in seconds, as CI runs
// them, on a spec list of two small workloads: a run cut short by its time budget writes a
// partial shard; the next run completes it; a third run measures nothing (the database's
// record count stays, the shard's lines stay), nor does --mine-only, which writes the same
// shard elsewhere from the records alone (any machine's: --device picks among several);
// `dragon data stats` passes, and fails naming
// the file and line once a line is damaged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/data/manifest.h"
#include "dragon/db/database.h"
#include "error/cli_runner.h"
#include "unit/db/db_test_util.h"

namespace dragon::data {
namespace {

using dragon::testing::run_dragon;

TEST(DataBuildCli, BuildsResumesAndChecksOnTheCpu) {
  db::testing::TempDir dir;
  const std::string specs = dir.file("specs.txt");
  std::ofstream(specs) << "# two small workloads\nmatmul:m=64,n=64,k=64\nsoftmax:shape=16x256\n";
  const std::string db = dir.file("tune.db");
  const std::string out = dir.file("set");
  const std::string build = "data build --corpus " + specs + " --db " + db + " --out " + out +
                            " --target cpu --trials 6 --batch 3 --seed 5";
  const std::string shard = out + "/" + shard_file_name(0, 1);

  // 1) Cut short by the time budget: a partial shard, and the manifest says so.
  dragon::testing::CliResult first = run_dragon(build + " --time-budget 0.001 --quiet");
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("PARTIAL"), std::string::npos) << first.output;
  EXPECT_TRUE(read_manifest(out).shards.at(0).partial);

  // 2) The same command without the budget completes it, with a progress line.
  dragon::testing::CliResult second = run_dragon(build);
  ASSERT_EQ(second.status, 0) << second.output;
  std::printf("%s", second.output.c_str());
  EXPECT_NE(second.output.find("2/2 workloads"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("candidates/s"), std::string::npos) << second.output;
  Manifest manifest = read_manifest(out);
  ASSERT_EQ(manifest.shards.size(), 1u);
  const ShardSummary& s = manifest.shards[0];
  EXPECT_FALSE(s.partial);
  EXPECT_EQ(s.workloads, 2);
  EXPECT_EQ(s.tuned, 2);
  EXPECT_EQ(s.with_examples + s.default_best + s.no_ok_record, 2);
  EXPECT_EQ(s.target.name, "cpu");
  EXPECT_GE(s.with_examples, 1) << "a tuned 64^3 matmul beats its default schedule on any CPU";
  const int64_t records = db::Database::open(db, {.read_only = true}).count();
  EXPECT_LE(records, 2 * (1 + 6));
  const std::vector<std::string> lines = support::read_compressed_jsonl(shard);
  EXPECT_EQ(static_cast<int64_t>(lines.size()), s.example_count());

  // 3) Again: the budget is used, nothing is measured, the shard is the same.
  dragon::testing::CliResult third = run_dragon(build + " --quiet");
  ASSERT_EQ(third.status, 0) << third.output;
  EXPECT_EQ(db::Database::open(db, {.read_only = true}).count(), records) << "nothing measured again";
  EXPECT_NE(third.output.find("run: 0 candidates measured"), std::string::npos) << third.output;
  EXPECT_EQ(support::read_compressed_jsonl(shard), lines);

  // 3b) --mine-only, into another folder: the same shard from the database's records alone
  // (what a run killed before writing its shard leaves), measuring nothing.
  const std::string mined = dir.file("mined");
  dragon::testing::CliResult only = run_dragon("data build --corpus " + specs + " --db " + db + " --out " + mined +
                                               " --target cpu --trials 6 --batch 3 --seed 5 --mine-only --quiet");
  ASSERT_EQ(only.status, 0) << only.output;
  EXPECT_NE(only.output.find("mining the records of cpu host on"), std::string::npos) << only.output;
  EXPECT_EQ(db::Database::open(db, {.read_only = true}).count(), records);
  EXPECT_EQ(support::read_compressed_jsonl(mined + "/" + shard_file_name(0, 1)), lines);

  // 3c) It needs no measurer, so it mines any machine's records: the same records filed
  // under a second device make the choice ambiguous until --device names one.
  const std::string device = db::Database::open(db, {.read_only = true}).stats().by_target_hardware.at(0).hardware.device;
  const std::string exported = dir.file("records.jsonl");
  ASSERT_EQ(run_dragon("db export " + db + " -o " + exported).status, 0);
  std::string text;
  {
    std::ifstream in(exported);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string quoted = "\"device\":" + nlohmann::json(device).dump();
  for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + 1)) {
    text.replace(at, quoted.size(), "\"device\":\"Another CPU\"");
  }
  std::ofstream(exported, std::ios::trunc) << text;
  ASSERT_EQ(run_dragon("db import " + db + " " + exported).status, 0);
  const std::string mine = "data build --corpus " + specs + " --db " + db + " --out " + dir.file("mined2") +
                           " --target cpu --trials 6 --mine-only";
  dragon::testing::CliResult ambiguous = run_dragon(mine);
  EXPECT_EQ(ambiguous.status, 1) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("2 keys of cpu records: name the device"), std::string::npos) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("Another CPU"), std::string::npos) << ambiguous.output;
  ASSERT_EQ(run_dragon(mine + " --device \"" + device + "\"").status, 0);
  EXPECT_EQ(support::read_compressed_jsonl(dir.file("mined2") + "/" + shard_file_name(0, 1)), lines);
  dragon::testing::CliResult tuning_device = run_dragon(build + " --device \"" + device + "\"");
  EXPECT_EQ(tuning_device.status, 1) << tuning_device.output;
  EXPECT_NE(tuning_device.output.find("--device and --driver choose the records --mine-only mines"), std::string::npos)
      << tuning_device.output;
  // Shards gathered from several runs have no manifest of their own: --rebuild-manifest
  // writes it from the shard summaries.
  std::filesystem::remove(mined + "/manifest.json");
  EXPECT_EQ(run_dragon("data stats " + mined).status, 1) << "no manifest";
  dragon::testing::CliResult rebuilt = run_dragon("data stats " + mined + " --rebuild-manifest");
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.output;
  EXPECT_EQ(read_manifest(mined).shards.size(), 1u);

  // 4) The checker passes ...
  dragon::testing::CliResult stats = run_dragon("data stats " + out);
  ASSERT_EQ(stats.status, 0) << stats.output;
  std::printf("%s", stats.output.c_str());
  EXPECT_NE(stats.output.find("check: 1 shards"), std::string::npos) << stats.output;

  // ... and names the file and line of a damaged example.
  std::vector<std::string> damaged = lines;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(damaged.at(0));
  j["hash"] = "0000000000000001";
  damaged[0] = j.dump();
  support::write_compressed_jsonl(shard, damaged);
  dragon::testing::CliResult bad = run_dragon("data stats " + out);
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("shard-0-of-1.jsonl.zst:1: workload"), std::string::npos) << bad.output;

  // Flags: a shard outside the sharding is a user error.
  dragon::testing::CliResult flags = run_dragon(build + " --shard 2/2");
  EXPECT_EQ(flags.status, 1) << flags.output;
  EXPECT_NE(flags.output.find("expected K/N with 0 <= K < N"), std::string::npos) << flags.output;
}

}  // namespace
}  // namespace dragon::data
