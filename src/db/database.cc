// Database (database.h): opening, workloads, batch commits and the record queries over
// the schema of schema.cc. SQL lives here, next to the code that binds it.
#include "dragon/db/database.h"

#include <bit>
#include <charconv>
#include <filesystem>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/db/jsonl.h"
#include "dragon/db/tuning_curve.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/support/error.h"
#include "record_queries.h"
#include "record_validation.h"
#include "sample_blob.h"
#include "schema.h"
#include "sqlite.h"

namespace dragon::db {
namespace {

// SQLite integers are signed: a hash is stored as the same 64 bits.
int64_t hash_column(WorkloadHash hash) { return std::bit_cast<int64_t>(hash); }
WorkloadHash hash_from_column(int64_t value) { return std::bit_cast<WorkloadHash>(value); }

// The 128-bit fingerprint of a record's content: the hash of its canonical JSON line.
std::string fingerprint(const Record& record) {
  const std::string hex = runtime::CompileCache::key({record_to_json_line(record)});
  std::string bytes(hex.size() / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned value = 0;
    std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, value, 16);
    bytes[i] = static_cast<char>(value);
  }
  return bytes;
}

std::span<const std::byte> as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

}  // namespace

struct Database::Impl {
  sqlite::Connection connection;
  bool read_only;

  // Statements prepared once per connection, by their SQL.
  std::unordered_map<std::string, sqlite::Statement> statements;

  Impl(sqlite::Connection c, bool ro) : connection(std::move(c)), read_only(ro) {}

  sqlite::Statement& statement(std::string_view sql) {
    auto it = statements.find(std::string(sql));
    if (it == statements.end()) it = statements.emplace(std::string(sql), sqlite::Statement(connection, sql)).first;
    return it->second;
  }

  void require_writable(std::string_view what) const {
    if (read_only) throw UserError(fmt::format("tuning database {} is open read-only: cannot {}", connection.path(), what));
  }

  // ---- ids of the key tables; nullopt when absent

  std::optional<int64_t> workload_id(WorkloadHash hash) {
    sqlite::Statement& s = statement("SELECT id FROM workloads WHERE hash = ?1");
    s.bind(1, hash_column(hash));
    std::optional<int64_t> id;
    if (s.step()) id = s.column_int64(0);
    s.reset();
    return id;
  }

  std::optional<int64_t> target_id(const Target& target) {
    sqlite::Statement& s = statement("SELECT id FROM targets WHERE name = ?1 AND arch = ?2");
    s.bind(1, target.name).bind(2, target.arch);
    std::optional<int64_t> id;
    if (s.step()) id = s.column_int64(0);
    s.reset();
    return id;
  }

  std::optional<int64_t> hardware_id(const Hardware& hardware) {
    sqlite::Statement& s = statement("SELECT id FROM hardware WHERE device = ?1 AND driver = ?2");
    s.bind(1, hardware.device).bind(2, hardware.driver);
    std::optional<int64_t> id;
    if (s.step()) id = s.column_int64(0);
    s.reset();
    return id;
  }

  // Inside a write transaction: the id, inserting the row when it is new.
  int64_t ensure_target(const Target& target) {
    if (auto id = target_id(target)) return *id;
    statement("INSERT INTO targets (name, arch) VALUES (?1, ?2)").bind(1, target.name).bind(2, target.arch).run();
    return connection.last_insert_rowid();
  }

  int64_t ensure_hardware(const Hardware& hardware) {
    if (auto id = hardware_id(hardware)) return *id;
    statement("INSERT INTO hardware (device, driver) VALUES (?1, ?2)")
        .bind(1, hardware.device)
        .bind(2, hardware.driver)
        .run();
    return connection.last_insert_rowid();
  }

  // Rows of workloads, targets and hardware are never changed or deleted once committed,
  // so looking ids up and then querying by them needs no common snapshot.
  struct KeyIds {
    int64_t workload, target, hardware;
  };
  // The ids of a key's parts; nullopt when any part was never stored (so nothing matches).
  std::optional<KeyIds> key_ids(const TuningKey& key) {
    auto w = workload_id(key.workload);
    auto t = target_id(key.target);
    auto h = hardware_id(key.hardware);
    if (!w || !t || !h) return std::nullopt;
    return KeyIds{*w, *t, *h};
  }

  // The current row of a statement that selects kRecordSelect's columns.
  StoredRecord read_record(const sqlite::Statement& s) const {
    StoredRecord out;
    out.id = s.column_int64(0);
    Record& r = out.record;
    r.key.workload = hash_from_column(s.column_int64(1));
    r.key.target = Target{s.column_text(2), s.column_text(3)};
    r.key.hardware = Hardware{s.column_text(4), s.column_text(5)};
    r.script = s.column_text(6);
    const std::string status = s.column_text(7);
    std::optional<RecordStatus> parsed = parse_record_status(status);
    if (!parsed) {
      throw UserError(fmt::format("tuning database {}: record {} has status '{}', unknown to this build",
                                  connection.path(), out.id, status));
    }
    r.status = *parsed;
    r.error = s.column_optional_text(8);
    r.kernel_hash = s.column_optional_text(9);
    std::optional<std::vector<float>> samples = decode_samples(s.column_blob(10));
    if (!samples) {
      throw UserError(fmt::format("tuning database {} is corrupt: record {} has a samples column of {} bytes, "
                                  "not a multiple of 4",
                                  connection.path(), out.id, s.column_blob(10).size()));
    }
    r.samples_ms = std::move(*samples);
    r.commit = s.column_optional_text(11);
    if (!s.is_null(12)) r.measured_at = TimePoint(std::chrono::milliseconds(s.column_int64(12)));
    r.origin = s.column_text(13);
    return out;
  }

  // Passes each row of `s` (bound, selecting kRecordSelect's columns) to `visit`, then
  // rewinds `s` whatever happens, so a cached statement never keeps a read open.
  void run_record_query(sqlite::Statement& s, const std::function<void(const StoredRecord&)>& visit) {
    struct Rewind {
      sqlite::Statement& s;
      ~Rewind() { s.reset(); }
    } rewind{s};
    while (s.step()) visit(read_record(s));
  }

  // The WHERE clause and binder of a filter; nullopt when a part of it was never stored.
  struct FilterSql {
    std::string where;
    std::function<void(sqlite::Statement&)> bind;
  };
  std::optional<FilterSql> filter_sql(const RecordFilter& filter) {
    std::vector<std::string> terms;
    std::vector<int64_t> ints;
    std::vector<std::string> texts;
    if (filter.workload) {
      auto id = workload_id(*filter.workload);
      if (!id) return std::nullopt;
      terms.push_back(fmt::format("r.workload = ?{}", terms.size() + 1));
      ints.push_back(*id);
    }
    if (filter.target) {
      auto id = target_id(*filter.target);
      if (!id) return std::nullopt;
      terms.push_back(fmt::format("r.target = ?{}", terms.size() + 1));
      ints.push_back(*id);
    }
    if (filter.hardware) {
      auto id = hardware_id(*filter.hardware);
      if (!id) return std::nullopt;
      terms.push_back(fmt::format("r.hardware = ?{}", terms.size() + 1));
      ints.push_back(*id);
    }
    const size_t int_terms = terms.size();
    if (filter.status) {
      terms.push_back(fmt::format("r.status = ?{}", terms.size() + 1));
      texts.emplace_back(record_status_id(*filter.status));
    }
    if (filter.origin) {
      terms.push_back(fmt::format("r.origin = ?{}", terms.size() + 1));
      texts.push_back(*filter.origin);
    }
    if (filter.device) {
      terms.push_back(fmt::format("r.hardware IN (SELECT id FROM hardware WHERE device = ?{})", terms.size() + 1));
      texts.push_back(*filter.device);
    }
    FilterSql out;
    for (size_t i = 0; i < terms.size(); ++i) out.where += (i == 0 ? " WHERE " : " AND ") + terms[i];
    out.bind = [ints, texts, int_terms](sqlite::Statement& s) {
      for (size_t i = 0; i < ints.size(); ++i) s.bind(static_cast<int>(i + 1), ints[i]);
      for (size_t i = 0; i < texts.size(); ++i) s.bind(static_cast<int>(int_terms + i + 1), std::string_view(texts[i]));
    };
    return out;
  }
};

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::open(const std::string& path, const OpenOptions& options) {
  std::error_code ec;
  if (options.read_only && !std::filesystem::exists(path, ec)) {
    throw UserError(fmt::format("cannot open tuning database {}: no such file", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw UserError(fmt::format("cannot open tuning database {}: it is a directory", path));
  }
  sqlite::Connection connection(path, options.read_only, options.busy_timeout);
  prepare_schema(connection, options.read_only);
  return Database(std::make_unique<Impl>(std::move(connection), options.read_only));
}

const std::string& Database::path() const { return impl_->connection.path(); }

// ---- workloads

void Database::add_workload(const Workload& workload) {
  impl_->require_writable("add a workload");
  const std::string where = fmt::format("workload {}", format_workload_hash(workload.hash));
  ir::PrimFunc func = validate_workload(workload, where);
  sqlite::WriteTransaction transaction(impl_->connection);
  std::optional<Workload> stored = find_workload(workload.hash);
  if (!stored) {
    impl_->statement("INSERT INTO workloads (hash, ir, spec) VALUES (?1, ?2, ?3)")
        .bind(1, hash_column(workload.hash))
        .bind(2, workload.ir)
        .bind(3, workload.spec)
        .run();
  } else {
    if (stored->ir != workload.ir && !ir::structural_equal(stored->function(), func)) {
      throw UserError(fmt::format("{}: {} already holds a different function with the same structural hash "
                                  "(a hash collision); spec {} against stored spec {}",
                                  where, path(), workload.spec.value_or("(none)"), stored->spec.value_or("(none)")));
    }
    if (!stored->spec && workload.spec) {
      impl_->statement("UPDATE workloads SET spec = ?2 WHERE hash = ?1")
          .bind(1, hash_column(workload.hash))
          .bind(2, *workload.spec)
          .run();
    }
  }
  transaction.commit();
}

std::optional<Workload> Database::find_workload(WorkloadHash hash) const {
  sqlite::Statement& s = impl_->statement("SELECT ir, spec FROM workloads WHERE hash = ?1");
  s.bind(1, hash_column(hash));
  std::optional<Workload> out;
  if (s.step()) out = Workload{hash, s.column_text(0), s.column_optional_text(1)};
  s.reset();
  return out;
}

std::vector<Workload> Database::workloads() const {
  sqlite::Statement& s = impl_->statement("SELECT hash, ir, spec FROM workloads ORDER BY id");
  std::vector<Workload> out;
  while (s.step()) out.push_back(Workload{hash_from_column(s.column_int64(0)), s.column_text(1), s.column_optional_text(2)});
  s.reset();
  return out;
}

// ---- records

CommitSummary Database::commit(std::span<const Record> batch) {
  impl_->require_writable("commit records");
  // Everything that needs no lock is done first: validation, the samples' bytes, the
  // median and the fingerprint. The write lock is held for the inserts only, so writers
  // in other processes overlap this work with each other's transactions.
  struct Row {
    std::string samples;
    std::optional<double> median_ms;
    std::string fingerprint;
  };
  std::vector<Row> rows;
  rows.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    validate_record(batch[i], fmt::format("record {} of the batch", i));
    rows.push_back(Row{encode_samples(batch[i].samples_ms), batch[i].median_ms(), fingerprint(batch[i])});
  }
  CommitSummary summary;
  if (batch.empty()) return summary;

  sqlite::WriteTransaction transaction(impl_->connection);
  // Ids looked up once per batch (a batch is usually one key).
  std::unordered_map<WorkloadHash, int64_t> workloads;
  std::map<std::pair<std::string, std::string>, int64_t> targets, hardware;
  auto target_id = [&](const Target& t) {
    auto it = targets.find({t.name, t.arch});
    if (it == targets.end()) it = targets.emplace(std::pair{t.name, t.arch}, impl_->ensure_target(t)).first;
    return it->second;
  };
  auto hardware_id = [&](const Hardware& h) {
    auto it = hardware.find({h.device, h.driver});
    if (it == hardware.end()) it = hardware.emplace(std::pair{h.device, h.driver}, impl_->ensure_hardware(h)).first;
    return it->second;
  };
  sqlite::Statement& insert = impl_->statement(R"sql(
INSERT INTO records (workload, target, hardware, status, median_ms, script, error, kernel_hash, samples_ms,
                     git_commit, measured_at, origin, fingerprint)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (fingerprint) DO NOTHING)sql");
  for (size_t i = 0; i < batch.size(); ++i) {
    const Record& r = batch[i];
    auto known = workloads.find(r.key.workload);
    if (known == workloads.end()) {
      std::optional<int64_t> id = impl_->workload_id(r.key.workload);
      if (!id) {
        throw UserError(fmt::format("record {} of the batch: workload {} is not in {} (add_workload first)", i,
                                    format_workload_hash(r.key.workload), path()));
      }
      known = workloads.emplace(r.key.workload, *id).first;
    }
    insert.bind(1, known->second)
        .bind(2, target_id(r.key.target))
        .bind(3, hardware_id(r.key.hardware))
        .bind(4, record_status_id(r.status))
        .bind(5, rows[i].median_ms)
        .bind(6, r.script)
        .bind(7, r.error)
        .bind(8, r.kernel_hash)
        .bind_blob(9, as_bytes(rows[i].samples))
        .bind(10, r.commit);
    if (r.measured_at) {
      insert.bind(11, static_cast<int64_t>(r.measured_at->time_since_epoch().count()));
    } else {
      insert.bind_null(11);
    }
    insert.bind(12, r.origin).bind_blob(13, as_bytes(rows[i].fingerprint));
    insert.run();
    if (impl_->connection.changes() == 1) {
      ++summary.inserted;
    } else {
      ++summary.duplicates;
    }
  }
  transaction.commit();
  return summary;
}

std::vector<StoredRecord> Database::top_k(const TuningKey& key, int64_t k) const {
  std::vector<StoredRecord> out;
  if (k <= 0) return out;
  std::optional<Impl::KeyIds> ids = impl_->key_ids(key);
  if (!ids) return out;
  sqlite::Statement& s = impl_->statement(std::string(queries::kRecordSelect) + std::string(queries::kTopKWhere));
  s.bind(1, ids->workload).bind(2, ids->target).bind(3, ids->hardware).bind(4, k);
  impl_->run_record_query(s, [&](const StoredRecord& r) { out.push_back(r); });
  return out;
}

std::optional<StoredRecord> Database::best(const TuningKey& key) const {
  std::vector<StoredRecord> top = top_k(key, 1);
  if (top.empty()) return std::nullopt;
  return std::move(top.front());
}

std::optional<StoredRecord> Database::best_script(const TuningKey& key) const {
  // Default records are few (one per version of the default that was measured), so a
  // short top list nearly always holds a scripted one; widen it when it does not.
  for (int64_t k = 4;; k *= 4) {
    std::vector<StoredRecord> top = top_k(key, k);
    for (StoredRecord& r : top) {
      if (!r.record.script.empty()) return std::move(r);
    }
    if (static_cast<int64_t>(top.size()) < k) return std::nullopt;
  }
}

std::optional<StoredRecord> Database::best_script_within(const TuningKey& key, int64_t trials) const {
  return tuning_curve(*this, key).best_within(trials);
}

std::optional<StoredRecord> Database::find_kernel(const TuningKey& key, std::string_view kernel_hash) const {
  std::optional<Impl::KeyIds> ids = impl_->key_ids(key);
  if (!ids) return std::nullopt;
  std::optional<StoredRecord> out;
  sqlite::Statement& s = impl_->statement(std::string(queries::kRecordSelect) + std::string(queries::kKernelWhere));
  s.bind(1, kernel_hash).bind(2, ids->workload).bind(3, ids->target).bind(4, ids->hardware);
  impl_->run_record_query(s, [&](const StoredRecord& r) { out = r; });
  return out;
}

void Database::for_each_record(const RecordFilter& filter, const std::function<void(const StoredRecord&)>& visit) const {
  std::optional<Impl::FilterSql> sql = impl_->filter_sql(filter);
  if (!sql) return;
  // A statement of its own, not a cached one, so `visit` may query this database again.
  sqlite::Statement s(impl_->connection, std::string(queries::kRecordSelect) + sql->where + "\nORDER BY r.id");
  sql->bind(s);
  impl_->run_record_query(s, visit);
}

std::vector<StoredRecord> Database::records(const RecordFilter& filter) const {
  std::vector<StoredRecord> out;
  for_each_record(filter, [&](const StoredRecord& r) { out.push_back(r); });
  return out;
}

int64_t Database::count(const RecordFilter& filter) const {
  std::optional<Impl::FilterSql> sql = impl_->filter_sql(filter);
  if (!sql) return 0;
  sqlite::Statement s(impl_->connection, "SELECT count(*) FROM records r" + sql->where);
  sql->bind(s);
  return s.step() ? s.column_int64(0) : 0;
}

std::vector<TuningKey> Database::keys() const {
  sqlite::Statement& s = impl_->statement(R"sql(
SELECT w.hash, t.name, t.arch, h.device, h.driver
FROM (SELECT DISTINCT workload, target, hardware FROM records) k
JOIN workloads w ON w.id = k.workload
JOIN targets t ON t.id = k.target
JOIN hardware h ON h.id = k.hardware
ORDER BY w.id, t.name, t.arch, h.device, h.driver)sql");
  std::vector<TuningKey> out;
  while (s.step()) {
    out.push_back(TuningKey{hash_from_column(s.column_int64(0)), Target{s.column_text(1), s.column_text(2)},
                            Hardware{s.column_text(3), s.column_text(4)}});
  }
  s.reset();
  return out;
}

std::vector<std::string> Database::integrity_problems() const {
  sqlite::Statement s(impl_->connection, "PRAGMA integrity_check");
  std::vector<std::string> problems;
  while (s.step()) {
    std::string line = s.column_text(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  return problems;
}

DatabaseStats Database::stats() const {
  sqlite::ReadTransaction snapshot(impl_->connection);
  DatabaseStats stats;
  stats.schema_version = static_cast<int>(impl_->connection.query_int64("PRAGMA user_version"));
  stats.workloads = impl_->connection.query_int64("SELECT count(*) FROM workloads");
  stats.records = impl_->connection.query_int64("SELECT count(*) FROM records");
  {
    sqlite::Statement s(impl_->connection, "SELECT status, count(*) FROM records GROUP BY status");
    while (s.step()) {
      const std::string id = s.column_text(0);
      std::optional<RecordStatus> status = parse_record_status(id);
      if (!status) throw UserError(fmt::format("tuning database {}: unknown record status '{}'", path(), id));
      stats.by_status[*status] = s.column_int64(1);
    }
  }
  {
    sqlite::Statement s(impl_->connection, "SELECT origin, count(*) FROM records GROUP BY origin");
    while (s.step()) stats.by_origin[s.column_text(0)] = s.column_int64(1);
  }
  sqlite::Statement s(impl_->connection, R"sql(
SELECT t.name, t.arch, h.device, h.driver, count(DISTINCT r.workload), count(*), sum(r.status = 'ok')
FROM records r
JOIN targets t ON t.id = r.target
JOIN hardware h ON h.id = r.hardware
GROUP BY r.target, r.hardware
ORDER BY t.name, t.arch, h.device, h.driver)sql");
  while (s.step()) {
    stats.by_target_hardware.push_back(DatabaseStats::KeyCount{Target{s.column_text(0), s.column_text(1)},
                                                               Hardware{s.column_text(2), s.column_text(3)},
                                                               s.column_int64(4), s.column_int64(5), s.column_int64(6)});
  }
  return stats;
}

}  // namespace dragon::db
