// The schema of the tuning database, version 1. A file is ours when its application_id
// is kApplicationId; its user_version is the schema version. Both are set in the same
// transaction as the tables, so a half-created file cannot exist.
#include "schema.h"

#include <thread>

#include <fmt/format.h>

#include "dragon/db/database.h"
#include "dragon/support/error.h"

namespace dragon::db {
namespace {

// "LDDB": marks the SQLite file as a Little Dragon tuning database.
constexpr int64_t kApplicationId = 0x4C444442;

// Records point at small tables of workloads, targets and hardware, so the key columns
// are small integers. records_by_key serves the best-k query (equality on the key and
// status, then ordered by median_ms, then by rowid, which every index ends in) and every
// scan by workload; records_by_kernel answers "measured already?". The fingerprint is a
// 128-bit hash of the record's canonical JSON line: identical records are stored once.
constexpr std::string_view kSchemaSql = R"sql(
CREATE TABLE workloads (
  id INTEGER PRIMARY KEY,
  hash INTEGER NOT NULL UNIQUE,
  ir TEXT NOT NULL,
  spec TEXT
);
CREATE TABLE targets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  UNIQUE (name, arch)
);
CREATE TABLE hardware (
  id INTEGER PRIMARY KEY,
  device TEXT NOT NULL,
  driver TEXT NOT NULL,
  UNIQUE (device, driver)
);
CREATE TABLE records (
  id INTEGER PRIMARY KEY,
  workload INTEGER NOT NULL REFERENCES workloads (id),
  target INTEGER NOT NULL REFERENCES targets (id),
  hardware INTEGER NOT NULL REFERENCES hardware (id),
  status TEXT NOT NULL,
  median_ms REAL,
  script TEXT NOT NULL,
  error TEXT,
  kernel_hash TEXT,
  samples_ms BLOB NOT NULL,
  git_commit TEXT,
  measured_at INTEGER,
  origin TEXT NOT NULL,
  fingerprint BLOB NOT NULL UNIQUE
);
CREATE INDEX records_by_key ON records (workload, target, hardware, status, median_ms);
CREATE INDEX records_by_kernel ON records (kernel_hash) WHERE kernel_hash IS NOT NULL;
)sql";

struct FileIdentity {
  int64_t application_id = 0;
  int64_t schema_version = 0;
  int64_t schema_objects = 0;  // tables, indexes, ...
};

FileIdentity read_identity(sqlite::Connection& connection) {
  FileIdentity identity;
  // The first read of a file that is not a database fails here with SQLITE_NOTADB.
  identity.application_id = connection.query_int64("PRAGMA application_id");
  identity.schema_version = connection.query_int64("PRAGMA user_version");
  identity.schema_objects = connection.query_int64("SELECT count(*) FROM sqlite_schema");
  return identity;
}

// Throws unless `identity` is a tuning database this build can use, or an empty file.
// Returns whether the file is empty.
bool check_identity(const sqlite::Connection& connection, const FileIdentity& identity) {
  const std::string& path = connection.path();
  if (identity.application_id == 0 && identity.schema_objects == 0 && identity.schema_version == 0) return true;
  if (identity.application_id != kApplicationId) {
    throw UserError(fmt::format(
        "{} is an SQLite database of another program, not a Little Dragon tuning database "
        "(application_id {:#x}, {} schema objects)",
        path, identity.application_id, identity.schema_objects));
  }
  if (identity.schema_version > kSchemaVersion) {
    throw UserError(fmt::format(
        "tuning database {} has schema version {}, newer than this build of Little Dragon reads ({}): "
        "use a newer dragon",
        path, identity.schema_version, kSchemaVersion));
  }
  if (identity.schema_version < 1) {
    throw UserError(fmt::format("tuning database {} has an unknown schema version {} (this build reads {})", path,
                                identity.schema_version, kSchemaVersion));
  }
  return false;
}

// Switches the file to WAL mode (persistent, so only the first opener changes it). The
// switch needs every other connection out of the way, so it is retried while busy.
void use_wal(sqlite::Connection& connection) {
  const auto deadline = std::chrono::steady_clock::now() + connection.busy_timeout();
  while (connection.query_text("PRAGMA journal_mode") != "wal") {
    const int rc = connection.exec_status("PRAGMA journal_mode = WAL");
    if (rc != 0 && !sqlite::Connection::is_busy(rc)) connection.fail(rc, "switching to WAL mode");
    if (rc == 0 && connection.query_text("PRAGMA journal_mode") != "wal") {
      throw UserError(fmt::format("tuning database {}: the file system does not support WAL mode, which "
                                  "several writers need; put the database on a local disk",
                                  connection.path()));
    }
    if (std::chrono::steady_clock::now() > deadline) connection.fail(rc, "switching to WAL mode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

void prepare_schema(sqlite::Connection& connection, bool read_only) {
  bool empty = false;
  {
    // One snapshot for the identity's three reads: between separate reads, another
    // process's creation of the schema could commit and show half of it.
    sqlite::ReadTransaction snapshot(connection);
    empty = check_identity(connection, read_identity(connection));
  }
  if (empty && read_only) {
    throw UserError(fmt::format("{} is empty, not a tuning database", connection.path()));
  }
  if (read_only) return;
  // Every commit reaches the disk before it returns: a commit survives kill -9 (and power
  // loss); throughput comes from batching records into one transaction.
  connection.exec("PRAGMA synchronous = FULL");
  use_wal(connection);
  if (!empty) return;
  sqlite::WriteTransaction transaction(connection);
  // Another process may have created the schema while this one waited for the lock.
  if (!check_identity(connection, read_identity(connection))) return;
  connection.exec(kSchemaSql);
  connection.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};", kApplicationId,
                              kSchemaVersion));
  transaction.commit();
}

}  // namespace dragon::db
