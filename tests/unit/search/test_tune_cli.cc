// `dragon tune` on the CPU end to end, in seconds, as CI runs it: a run killed
// with SIGKILL after its first committed rounds loses none of them; a rerun
// with the same command resumes (the default schedule is not measured again,
// the earlier trials count against --trials) and ends with exactly the asked
// number of trials; and the best record, replayed and measured again here
// against the default schedule, is faster by a margin far beyond timing noise.
// The slower, larger version is test_tune_cpu.cc (label perf).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "error/cli_runner.h"
#include "tuned_vs_default.h"

namespace dragon::search {
namespace {

using Clock = std::chrono::steady_clock;

// Starts `dragon ARGS...` with its output in `log`; returns the child's pid.
pid_t start_dragon(const std::vector<std::string> &args,
                   const std::string &log) {
  std::vector<std::string> argv_storage = {std::string(DRAGON_BINARY_DIR) +
                                           "/dragon"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : argv_storage)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Records in `path` (0 while the file does not exist yet).
int64_t records_in(const std::string &path) {
  if (!std::filesystem::exists(path))
    return 0;
  try {
    return db::Database::open(path, {.read_only = true}).count();
  } catch (const std::exception &) {
    return 0; // created, schema not yet written
  }
}

class TuneCli : public ::testing::Test {
protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            ("dragon-tune-cli-" + std::to_string(::getpid()));
    db_ = base_.string() + ".db";
    for (const char *suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db_ + suffix);
  }
  void TearDown() override {
    for (const char *suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db_ + suffix);
    std::filesystem::remove(base_.string() + ".log");
  }
  std::filesystem::path base_;
  std::string db_;
};

TEST_F(TuneCli, AKilledRunLosesNothingAndTheRerunResumesAndBeatsTheDefault) {
  const std::string spec = "matmul:m=128,n=128,k=128";
  constexpr int kTrials = 16, kBatch = 4;
  const std::vector<std::string> args = {"tune",     spec,
                                         "--target", "cpu",
                                         "--trials", std::to_string(kTrials),
                                         "--batch",  std::to_string(kBatch),
                                         "--db",     db_,
                                         "--seed",   "7",
                                         "--quiet"};
  const std::string log = base_.string() + ".log";

  // The first run: killed once the default and at least one round are
  // committed.
  const Clock::time_point start = Clock::now();
  pid_t pid = start_dragon(args, log);
  ASSERT_GT(pid, 0);
  int raw = 0;
  bool exited = false;
  while (records_in(db_) < 1 + kBatch &&
         Clock::now() - start < std::chrono::seconds(60)) {
    if (::waitpid(pid, &raw, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &raw, 0);
  }
  ASSERT_TRUE(WIFSIGNALED(raw))
      << "the first run ended before it could be killed:\n"
      << dragon::testing::run_dragon("db stats " + db_).output;
  std::map<int64_t, db::Record> committed;
  {
    db::Database database = db::Database::open(db_, {.read_only = true});
    for (const db::StoredRecord &r : database.records())
      committed.emplace(r.id, r.record);
    std::printf("killed after %.1f s with %zu records committed\n",
                std::chrono::duration<double>(Clock::now() - start).count(),
                committed.size());
  }
  ASSERT_GE(committed.size(), static_cast<size_t>(1 + kBatch));
  ASSERT_LT(committed.size(), static_cast<size_t>(1 + kTrials))
      << "nothing left for the rerun to resume";

  // The rerun: same command, resumes.
  dragon::testing::CliResult rerun = dragon::testing::run_dragon([&] {
    std::string line;
    for (const std::string &a : args)
      line += a + " ";
    return line;
  }());
  ASSERT_EQ(rerun.status, 0) << rerun.output;
  std::printf("%s", rerun.output.c_str());
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("both runs: %.1f s\n", seconds);

  db::Database database = db::Database::open(db_, {.read_only = true});
  std::vector<db::StoredRecord> all = database.records();
  EXPECT_EQ(all.size(), static_cast<size_t>(1 + kTrials))
      << "the trials, the earlier run's included, and the default";
  int64_t defaults = 0, ok = 0;
  std::map<int64_t, const db::Record *> by_id;
  for (const db::StoredRecord &r : all) {
    by_id.emplace(r.id, &r.record);
    defaults += r.record.script.empty() ? 1 : 0;
    ok += r.record.status == db::RecordStatus::kOk ? 1 : 0;
  }
  EXPECT_EQ(defaults, 1) << "the default schedule is measured once";
  EXPECT_GE(ok, kTrials / 2);
  for (const auto &[id, record] : committed) {
    auto it = by_id.find(id);
    ASSERT_NE(it, by_id.end())
        << "record " << id << " of the killed run is gone";
    EXPECT_EQ(*it->second, record) << "record " << id << " changed";
  }

  ops::Workload w = ops::OpRegistry::global().make_workload(spec);
  std::optional<ir::PrimFunc> tuned = testing::best_tuned(database, w);
  ASSERT_TRUE(tuned.has_value());
  testing::Gain gain = testing::remeasure_against_default(w, *tuned);
  EXPECT_LT(gain.tuned_ms, 0.5 * gain.default_ms);
}

} // namespace
} // namespace dragon::search
