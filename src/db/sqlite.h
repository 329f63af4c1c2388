// A thin RAII layer over SQLite's C API for the tuning database: a connection, prepared
// statements, and one translation of SQLite's result codes into our error channels (the
// file's problems are UserErrors naming the path; our own SQL failing is an
// InternalError). Internal to src/db; not a general SQLite binding.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace dragon::db::sqlite {

class Connection;

// A prepared statement. Bind indices are 1-based, column indices 0-based, as in SQLite.
class Statement {
 public:
  Statement(Connection& connection, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind_blob(int index, std::span<const std::byte> bytes);
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Steps once: true when a row is ready, false when done. Errors throw (Connection::fail).
  bool step();
  // Steps to completion of a statement that returns no rows.
  void run();
  // Clears bindings and rewinds, ready for reuse.
  void reset();

  bool is_null(int column) const;
  int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  std::optional<std::string> column_optional_text(int column) const;
  std::span<const std::byte> column_blob(int column) const;

 private:
  Connection* connection_;
  sqlite3_stmt* statement_ = nullptr;
  std::string sql_;
};

class Connection {
 public:
  // Opens (read-only, or read-write creating the file). Throws UserError naming the path.
  Connection(const std::string& path, bool read_only, std::chrono::milliseconds busy_timeout);
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&&) = delete;
  Connection(const Connection&) = delete;
  ~Connection();

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  std::chrono::milliseconds busy_timeout() const { return busy_timeout_; }

  // Runs SQL that returns no rows (may hold several statements).
  void exec(std::string_view sql);
  // The same, returning SQLite's result code instead of throwing (for retry loops).
  int exec_status(std::string_view sql);
  // The first column of the first row of a one-value query (a pragma).
  int64_t query_int64(std::string_view sql);
  std::string query_text(std::string_view sql);
  int64_t changes() const;
  int64_t last_insert_rowid() const;

  // Throws for result code `rc` from doing `what`: UserError for what a file or another
  // process can cause (not a database, corrupt, locked, I/O, read-only, full), naming the
  // path; InternalError for the rest (our SQL is wrong).
  [[noreturn]] void fail(int rc, std::string_view what) const;
  // Whether `rc` means another connection holds a lock (worth retrying).
  static bool is_busy(int rc);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::chrono::milliseconds busy_timeout_;
};

// BEGIN IMMEDIATE (the write lock up front, so two writers never deadlock upgrading a read
// lock) ... COMMIT; rolls back when destroyed without commit().
class WriteTransaction {
 public:
  explicit WriteTransaction(Connection& connection);
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  ~WriteTransaction();
  void commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

// A read transaction, so a multi-statement read sees one snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(Connection& connection);
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ~ReadTransaction();

 private:
  Connection& connection_;
};

}  // namespace dragon::db::sqlite
