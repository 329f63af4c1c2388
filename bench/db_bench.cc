// Tuning-database figures: filling a database with N records (default 1,000,000) in
// batches, best-k and "measured already?" query times on it, and records committed per
// second by 1, 2 and 4 writer processes at once. Prints a table; the database files live
// in a temporary directory removed at the end.
// Usage: bench_db [--records N] [--dir DIR] [--seconds S]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dragon/db/database.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "unit/schedule/random_trace.h"

namespace {

using namespace dragon;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Setup {
  std::vector<db::Workload> workloads;
  std::vector<db::TuningKey> keys;
  std::vector<std::string> scripts;
};

Setup make_setup() {
  Setup s;
  for (int m : {64, 128, 256, 512, 1024}) {
    for (int n : {64, 128, 256, 512}) {
      for (int k : {32, 64, 128, 256, 512}) {
        ops::Workload w = ops::OpRegistry::global().make_workload(fmt::format("matmul:m={},n={},k={},dtype=f32", m, n, k));
        s.workloads.push_back(db::Workload::of(w.func, w.spec));
      }
    }
  }
  for (const db::Workload& w : s.workloads) {
    for (const db::Target& t : {db::Target{"cuda", "sm_90a"}, db::Target{"cpu", "x86-64"}}) {
      for (const db::Hardware& h : {db::Hardware{"NVIDIA H200", "580.65.06"}, db::Hardware{"NVIDIA A100", "580.65.06"}}) {
        s.keys.push_back(db::TuningKey{w.hash, t, h});
      }
    }
  }
  // Realistic scripts: random schedules of one workload (about 10-30 lines each).
  const ir::PrimFunc func = s.workloads.front().function();
  schedule::testing::RandomTraceOptions options;
  options.steps = 8;
  for (uint64_t seed = 0; s.scripts.size() < 16; ++seed) {
    s.scripts.push_back(script::encode(schedule::testing::random_schedule(func, seed, options).trace()));
  }
  return s;
}

db::Record random_record(const Setup& s, std::mt19937_64& rng, int64_t serial) {
  db::Record r;
  r.key = s.keys[rng() % s.keys.size()];
  r.script = s.scripts[rng() % s.scripts.size()];
  r.kernel_hash = fmt::format("{:032x}", rng());
  r.origin = "search";
  r.commit = "0d0b28e";
  r.measured_at = db::TimePoint(std::chrono::milliseconds(1'760'000'000'000 + serial));
  if (rng() % 10 == 0) {
    r.status = db::RecordStatus::kBuildFailed;
    r.error = "nvrtc: error: too many resources requested for launch";
  } else {
    std::lognormal_distribution<double> latency(-2.0, 1.0), noise(0.0, 0.02);
    const double centre = latency(rng);
    for (int i = 0; i < 20; ++i) r.samples_ms.push_back(static_cast<float>(centre * noise(rng)));
  }
  return r;
}

// Median and 99th percentile of `values`, in microseconds.
std::string quantiles_us(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return fmt::format("median {:.1f} us, p99 {:.1f} us", values[values.size() / 2] * 1e6,
                     values[values.size() * 99 / 100] * 1e6);
}

void fill_and_query(const std::string& dir, const Setup& s, int64_t records) {
  const std::string path = dir + "/filled.db";
  db::Database db = db::Database::open(path);
  for (const db::Workload& w : s.workloads) db.add_workload(w);
  std::mt19937_64 rng(1);
  const auto start = Clock::now();
  constexpr int64_t kBatch = 10000;
  for (int64_t done = 0; done < records;) {
    std::vector<db::Record> batch;
    for (int64_t i = 0; i < kBatch && done < records; ++i, ++done) batch.push_back(random_record(s, rng, done));
    db.commit(batch);
  }
  const double fill = seconds_since(start);
  std::printf("fill: %lld records (%zu workloads, %zu keys) in batches of %lld: %.1f s, %.0f records/s, %.0f MB\n",
              static_cast<long long>(records), s.workloads.size(), s.keys.size(), static_cast<long long>(kBatch), fill,
              records / fill, std::filesystem::file_size(path) / 1e6 + std::filesystem::file_size(path + "-wal") / 1e6);

  std::vector<double> best_times, top16_times, kernel_times;
  for (int q = 0; q < 2000; ++q) {
    const db::TuningKey& key = s.keys[rng() % s.keys.size()];
    auto t0 = Clock::now();
    auto best = db.best(key);
    best_times.push_back(seconds_since(t0));
    t0 = Clock::now();
    auto top = db.top_k(key, 16);
    top16_times.push_back(seconds_since(t0));
    t0 = Clock::now();
    auto seen = db.find_kernel(key, fmt::format("{:032x}", rng()));
    kernel_times.push_back(seconds_since(t0));
    if (!best || top.size() != 16 || seen) std::printf("unexpected answer for a key\n");
  }
  std::printf("best (top 1) on %lld records: %s\n", static_cast<long long>(records), quantiles_us(best_times).c_str());
  std::printf("top 16:                    %s\n", quantiles_us(top16_times).c_str());
  std::printf("find_kernel (a miss):      %s\n", quantiles_us(kernel_times).c_str());
}

void writers(const std::string& dir, const Setup& s, int processes, int batch_size, double seconds) {
  const std::string path = fmt::format("{}/writers-{}-{}.db", dir, processes, batch_size);
  {
    db::Database db = db::Database::open(path);
    for (const db::Workload& w : s.workloads) db.add_workload(w);
  }
  const auto start = Clock::now();
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      int status = 0;
      try {
        db::Database db = db::Database::open(path);
        std::mt19937_64 rng(100 + p);
        for (int64_t serial = 0; seconds_since(start) < seconds;) {
          std::vector<db::Record> batch;
          for (int i = 0; i < batch_size; ++i) batch.push_back(random_record(s, rng, serial++));
          db.commit(batch);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer: %s\n", e.what());
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  const double elapsed = seconds_since(start);
  const int64_t count = db::Database::open(path, db::OpenOptions{.read_only = true}).count();
  std::printf("%d writer%s, batches of %3d: %7.0f records/s, %6.1f commits/s\n", processes, processes > 1 ? "s" : " ",
              batch_size, count / elapsed, count / elapsed / batch_size);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t records = 1'000'000;
  double seconds = 3;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--records") records = std::stoll(argv[i + 1]);
    else if (flag == "--seconds") seconds = std::stod(argv[i + 1]);
    else if (flag == "--dir") dir = argv[i + 1];
  }
  const bool own_dir = dir.empty();
  if (own_dir) {
    std::string pattern = (std::filesystem::temp_directory_path() / "bench-db-XXXXXX").string();
    dir = mkdtemp(pattern.data());
  }
  const Setup setup = make_setup();
  for (int processes : {1, 2, 4}) {
    for (int batch : {1, 64}) writers(dir, setup, processes, batch, seconds);
  }
  fill_and_query(dir, setup, records);
  if (own_dir) std::filesystem::remove_all(dir);
  return 0;
}
