// The tuning database: workloads and measured records in one SQLite file in WAL mode, so
// several processes read and write it at once and a process killed mid-run (kill -9)
// loses no committed record. The data types are record.h; JSON lines and MetaSchedule
// import are jsonl.h and metaschedule_import.h; the schema is docs/db.md.
//
// Typical use (search):
//   db::Database db = db::Database::open("tune.db");
//   db::Workload workload = db::Workload::of(func, spec);
//   db.add_workload(workload);
//   db::TuningKey key{workload.hash, {"cuda", "sm_90a"}, {"NVIDIA H200", "580.65.06"}};
//   for (const db::StoredRecord& r : db.top_k(key, 16)) seed(r.record.script);
//   if (db.find_kernel(key, kernel_hash)) skip();   // measured already
//   db.commit(batch);                                // one transaction per batch
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/db/record.h"

namespace dragon::db {

// The schema version this build reads and writes (SQLite's user_version pragma).
inline constexpr int kSchemaVersion = 1;

struct OpenOptions {
  // Read-only opens never create or change the file (and fail when it does not exist).
  bool read_only = false;
  // How long a statement waits for another process's write lock before failing.
  std::chrono::milliseconds busy_timeout{60000};
};

struct CommitSummary {
  int64_t inserted = 0;
  int64_t duplicates = 0;  // identical to a record already stored (same content), skipped
};

// What `dragon db stats` prints.
struct DatabaseStats {
  struct KeyCount {
    Target target;
    Hardware hardware;
    int64_t workloads = 0;  // distinct workloads with records under this target and hardware
    int64_t records = 0;
    int64_t ok = 0;
  };
  int64_t workloads = 0;
  int64_t records = 0;
  std::map<RecordStatus, int64_t> by_status;  // only statuses that occur
  std::map<std::string, int64_t> by_origin;
  std::vector<KeyCount> by_target_hardware;   // ordered by target, then hardware
  int schema_version = kSchemaVersion;
};

// One connection to one database file. Movable, not copyable; use one object from one
// thread at a time (open one per thread or per process; never carry one across fork()).
// Errors: a file that cannot be opened, is not an SQLite database, is another program's
// SQLite database, has an unknown schema version or is corrupt raises UserError naming the
// path and the reason; so does a lock held past the busy timeout. Bad records passed in
// raise UserError naming the record and the field, before anything is written.
class Database {
 public:
  // Opens `path`, creating the file and its schema when it does not exist (unless
  // read-only). Creation is safe when several processes open a new file at once.
  static Database open(const std::string& path, const OpenOptions& options = {});

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;

  // ---- workloads
  // Stores `workload` unless its hash is stored already. When it is, the stored function
  // must be structurally equal (the text may differ in names only), else UserError (a hash
  // collision); a spec is added to a stored workload that had none.
  void add_workload(const Workload& workload);
  std::optional<Workload> find_workload(WorkloadHash hash) const;
  // All workloads, in the order they were added.
  std::vector<Workload> workloads() const;

  // ---- records
  // Stores the batch in one transaction: all of it or, on error, none of it. Every
  // record's workload must have been added; every record is validated first (record.h's
  // field rules; the script must be canonical, script::is_canonical). A record identical
  // in every field to one already stored is skipped and counted as a duplicate, so
  // committing or importing the same records twice stores them once.
  CommitSummary commit(std::span<const Record> batch);
  CommitSummary commit(const Record& record) { return commit(std::span<const Record>(&record, 1)); }

  // The k fastest kOk records under `key`, by median latency (ties: earlier commit first).
  // An index query: cost grows with k, not with the number of records.
  std::vector<StoredRecord> top_k(const TuningKey& key, int64_t k) const;
  // top_k(key, 1), or nullopt when nothing under `key` is kOk. `dragon best` and
  // `dragon bench --db` use this.
  std::optional<StoredRecord> best(const TuningKey& key) const;
  // The fastest kOk record with a script: best() without the default schedule's records
  // (script ""), which stand for whatever the default was when they were measured, so
  // a faster old default must not hide the best tuned script.
  std::optional<StoredRecord> best_script(const TuningKey& key) const;
  // best_script as a search of `trials` trials had it: the fastest kOk record among those
  // of the first `trials` distinct scripts measured under `key`, in commit order (a script
  // measured again, its code changed since, is the same trial). A scan of the key's
  // records. `dragon bench --max-trials`: a suite's figure within a trial budget.
  std::optional<StoredRecord> best_script_within(const TuningKey& key, int64_t trials) const;

  // The latest record under `key` whose kernel_hash is `kernel_hash` (any status):
  // "was this kernel measured already, and how did it end?"
  std::optional<StoredRecord> find_kernel(const TuningKey& key, std::string_view kernel_hash) const;

  // Records matching `filter`, in commit order (ascending id).
  std::vector<StoredRecord> records(const RecordFilter& filter = {}) const;
  // The same, streamed: `visit` sees one record at a time (for millions of records). It
  // may query this database, but not write to it (commit after the scan).
  void for_each_record(const RecordFilter& filter, const std::function<void(const StoredRecord&)>& visit) const;
  int64_t count(const RecordFilter& filter = {}) const;
  // The distinct keys that have records, ordered by workload (order added), target, hardware.
  std::vector<TuningKey> keys() const;

  DatabaseStats stats() const;
  // SQLite's integrity check of the whole file (reads every page: seconds for millions of
  // records). Empty when the file is sound, else SQLite's findings, one per line.
  std::vector<std::string> integrity_problems() const;

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dragon::db
