// Several processes on one tuning database: writers forked at once (and creating the file
// at once) lose no record while a reader only ever sees whole batches; a writer killed with
// SIGKILL mid-run loses nothing it committed and leaves a file that opens cleanly.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "dragon/db/database.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

// Runs `body` in a child process; the child exits 0, or 1 after printing what it threw.
// The child never returns into GoogleTest.
pid_t spawn(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  int status = 0;
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
    status = 1;
  }
  _exit(status);
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TuningKey h200_key(const Workload& w) { return TuningKey{w.hash, testing::cuda_sm90a(), testing::h200()}; }

// A batch of `size` distinct records tagged "TAG-rN" in kernel_hash.
std::vector<Record> tagged_batch(const Workload& w, const std::string& tag, int size, const std::string& origin) {
  std::vector<Record> batch;
  for (int r = 0; r < size; ++r) {
    Record record = testing::ok_record(h200_key(w), "", {0.5f + 0.001f * static_cast<float>(r)});
    record.kernel_hash = tag + "-r" + std::to_string(r);
    record.origin = origin;
    batch.push_back(std::move(record));
  }
  return batch;
}

TEST(Concurrency, SeveralWriterProcessesLoseNoRecord) {
  TempDir dir;
  const std::string path = dir.file("shared.db");
  const Workload matmul = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
  constexpr int kWriters = 4, kBatches = 25, kBatchSize = 20;

  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.push_back(spawn([&, w] {
      // Every writer creates the file and adds the workload: both must be safe at once.
      Database db = Database::open(path);
      db.add_workload(matmul);
      for (int b = 0; b < kBatches; ++b) {
        const std::string tag = "w" + std::to_string(w) + "-b" + std::to_string(b);
        if (db.commit(tagged_batch(matmul, tag, kBatchSize, "writer")).inserted != kBatchSize) {
          throw std::runtime_error("a distinct record was taken for a duplicate");
        }
      }
    }));
  }
  // Meanwhile a reader sees only whole batches, never fewer records than before.
  std::map<pid_t, int> exit_status;
  int64_t last_seen = 0;
  int reads = 0;
  for (bool writers_done = false; !writers_done;) {
    for (pid_t pid : writers) {
      int status = 0;
      if (!exit_status.count(pid) && waitpid(pid, &status, WNOHANG) == pid) exit_status[pid] = status;
    }
    writers_done = exit_status.size() == writers.size();  // then one last read
    if (!std::filesystem::exists(path)) continue;
    try {
      Database reader = Database::open(path, OpenOptions{.read_only = true});
      const int64_t seen = reader.count();
      EXPECT_EQ(seen % kBatchSize, 0) << "a reader saw part of a batch";
      EXPECT_GE(seen, last_seen);
      last_seen = seen;
      ++reads;
    } catch (const UserError& e) {
      // The file may exist before its schema does (another process is creating it).
      EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (const auto& [pid, status] : exit_status) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << pid << " status " << status;
  }
  EXPECT_EQ(last_seen, kWriters * kBatches * kBatchSize);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d writers x %d batches x %d records: %.0f records/s committed (%d reads meanwhile)\n", kWriters,
              kBatches, kBatchSize, kWriters * kBatches * kBatchSize / seconds, reads);

  Database db = Database::open(path);
  EXPECT_EQ(db.workloads().size(), 1u);
  std::set<std::string> hashes;
  for (const StoredRecord& r : db.records()) hashes.insert(*r.record.kernel_hash);
  EXPECT_EQ(hashes.size(), static_cast<size_t>(kWriters * kBatches * kBatchSize));
  for (int w = 0; w < kWriters; ++w) {
    for (int b = 0; b < kBatches; ++b) {
      for (int r = 0; r < kBatchSize; ++r) {
        const std::string tag = "w" + std::to_string(w) + "-b" + std::to_string(b) + "-r" + std::to_string(r);
        ASSERT_TRUE(hashes.count(tag)) << tag << " was committed and lost";
      }
    }
  }
  EXPECT_TRUE(db.integrity_problems().empty());
}

TEST(Concurrency, AWriterKilledMidRunLosesNoCommittedRecord) {
  TempDir dir;
  const std::string path = dir.file("killed.db");
  const Workload matmul = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
  constexpr int kBatchSize = 100;
  { Database::open(path).add_workload(matmul); }

  // Three writers in turn, each killed at a different moment after some commits.
  for (int round = 0; round < 3; ++round) {
    int report[2];
    ASSERT_EQ(pipe(report), 0);
    const pid_t writer = spawn([&] {
      close(report[0]);
      Database db = Database::open(path);
      for (int b = 0;; ++b) {
        const std::string tag = "round" + std::to_string(round) + "-b" + std::to_string(b);
        db.commit(tagged_batch(matmul, tag, kBatchSize, "killed"));
        // Reported only once commit() has returned: the batch is committed.
        if (write(report[1], &b, sizeof b) != sizeof b) throw std::runtime_error("report pipe");
      }
    });
    close(report[1]);
    int last_reported = -1;
    for (int seen = 0; seen < 5 + 3 * round; ++seen) {
      int b = 0;
      ASSERT_EQ(read(report[0], &b, sizeof b), static_cast<ssize_t>(sizeof b)) << "the writer died";
      last_reported = b;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(700 * round));
    ASSERT_EQ(kill(writer, SIGKILL), 0);
    const int status = wait_for(writer);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    for (int b = 0; read(report[0], &b, sizeof b) == static_cast<ssize_t>(sizeof b);) last_reported = b;
    close(report[0]);

    Database db = Database::open(path);  // opens cleanly: SQLite recovers the WAL
    EXPECT_TRUE(db.integrity_problems().empty());
    std::map<int, int> per_batch;
    const std::string prefix = "round" + std::to_string(round) + "-b";
    for (const StoredRecord& r : db.records()) {
      const std::string& hash = *r.record.kernel_hash;
      if (hash.rfind(prefix, 0) != 0) continue;
      ++per_batch[std::stoi(hash.substr(prefix.size(), hash.find("-r") - prefix.size()))];
    }
    for (int b = 0; b <= last_reported; ++b) {
      EXPECT_EQ(per_batch[b], kBatchSize) << "round " << round << ": committed batch " << b << " lost records";
    }
    for (const auto& [b, count] : per_batch) {
      EXPECT_EQ(count, kBatchSize) << "round " << round << ": batch " << b << " stored in part";
      EXPECT_LE(b, last_reported + 1) << "a batch after the one being committed at the kill";
    }
    // And the next writer goes on where it stopped.
    EXPECT_EQ(db.commit(tagged_batch(matmul, "after" + std::to_string(round), 3, "killed")).inserted, 3);
  }
}

}  // namespace
}  // namespace dragon::db
