// The SQLite layer of src/db: statements, the connection and the translation of result
// codes into UserError (the file, the disk, other processes) or InternalError (our SQL).
#include "sqlite.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::db::sqlite {
namespace {

// The statement's first line, for messages.
std::string_view first_line(std::string_view sql) {
  size_t start = sql.find_first_not_of(" \n");
  if (start == std::string_view::npos) return sql;
  sql.remove_prefix(start);
  return sql.substr(0, sql.find('\n'));
}

}  // namespace

// ---- Connection

Connection::Connection(const std::string& path, bool read_only, std::chrono::milliseconds busy_timeout)
    : path_(path), busy_timeout_(busy_timeout) {
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw UserError(fmt::format("cannot open tuning database {}: {}", path, reason));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
}

Connection::Connection(Connection&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), busy_timeout_(other.busy_timeout_) {
  other.db_ = nullptr;
}

Connection::~Connection() {
  // close_v2 defers the close until every statement is finalized, so destruction order
  // between the connection and cached statements does not matter.
  if (db_) sqlite3_close_v2(db_);
}

void Connection::fail(int rc, std::string_view what) const {
  const std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      throw UserError(fmt::format("{} is not a tuning database (not an SQLite file: {})", path_, reason));
    case SQLITE_CORRUPT:
      throw UserError(fmt::format("tuning database {} is corrupt ({}) while {}", path_, reason, what));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw UserError(fmt::format("tuning database {} stayed locked by another process for {} ms while {} ({})",
                                  path_, busy_timeout_.count(), what, reason));
    case SQLITE_CANTOPEN:
      throw UserError(fmt::format("cannot open tuning database {}: {} (while {})", path_, reason, what));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_PROTOCOL:
    case SQLITE_NOMEM:
    case SQLITE_AUTH:
      throw UserError(fmt::format("tuning database {}: {} failed: {}", path_, what, reason));
    default:
      throw InternalError(fmt::format("tuning database {}: {} failed: {} (SQLite code {})", path_, what, reason, rc));
  }
}

void Connection::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // sqlite3_errmsg says the same
  if (rc != SQLITE_OK) fail(rc, first_line(sql));
}

int Connection::exec_status(std::string_view sql) {
  std::string text(sql);
  return sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
}

bool Connection::is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

int64_t Connection::query_int64(std::string_view sql) {
  Statement statement(*this, sql);
  if (!statement.step()) throw InternalError(fmt::format("{}: no row from `{}`", path_, sql));
  return statement.column_int64(0);
}

std::string Connection::query_text(std::string_view sql) {
  Statement statement(*this, sql);
  if (!statement.step()) throw InternalError(fmt::format("{}: no row from `{}`", path_, sql));
  return statement.column_text(0);
}

int64_t Connection::changes() const { return sqlite3_changes64(db_); }
int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

// ---- Statement

Statement::Statement(Connection& connection, std::string_view sql) : connection_(&connection), sql_(sql) {
  const int rc = sqlite3_prepare_v3(connection.handle(), sql_.data(), static_cast<int>(sql_.size()),
                                    SQLITE_PREPARE_PERSISTENT, &statement_, nullptr);
  if (rc != SQLITE_OK) connection.fail(rc, fmt::format("preparing `{}`", first_line(sql_)));
}

Statement::Statement(Statement&& other) noexcept
    : connection_(other.connection_), statement_(other.statement_), sql_(std::move(other.sql_)) {
  other.statement_ = nullptr;
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, int64_t value) {
  if (int rc = sqlite3_bind_int64(statement_, index, value); rc != SQLITE_OK) connection_->fail(rc, "binding");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (int rc = sqlite3_bind_double(statement_, index, value); rc != SQLITE_OK) connection_->fail(rc, "binding");
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies, so the caller's string may die before the step.
  if (int rc = sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      rc != SQLITE_OK) {
    connection_->fail(rc, "binding");
  }
  return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::byte> bytes) {
  // A zero-length blob must stay a blob, not NULL: pass a non-null pointer.
  static const std::byte kEmpty{};
  const void* data = bytes.empty() ? &kEmpty : bytes.data();
  if (int rc = sqlite3_bind_blob64(statement_, index, data, bytes.size(), SQLITE_TRANSIENT); rc != SQLITE_OK) {
    connection_->fail(rc, "binding");
  }
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (int rc = sqlite3_bind_null(statement_, index); rc != SQLITE_OK) connection_->fail(rc, "binding");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Leave the statement reusable whatever the failure, then report it.
  sqlite3_reset(statement_);
  connection_->fail(rc, fmt::format("running `{}`", first_line(sql_)));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

int64_t Statement::column_int64(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::column_double(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  return text ? std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size)) : std::string();
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_text(column);
}

std::span<const std::byte> Statement::column_blob(int column) const {
  const void* data = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  if (!data) return {};
  return {static_cast<const std::byte*>(data), static_cast<size_t>(size)};
}

// ---- transactions

WriteTransaction::WriteTransaction(Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE");
}

WriteTransaction::~WriteTransaction() {
  if (!open_) return;
  // Nothing to do if ROLLBACK itself fails: SQLite has already rolled back on the errors
  // that make it fail, and a destructor must not throw.
  sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit() {
  connection_.exec("COMMIT");
  open_ = false;
}

ReadTransaction::ReadTransaction(Connection& connection) : connection_(connection) { connection_.exec("BEGIN"); }

ReadTransaction::~ReadTransaction() { sqlite3_exec(connection_.handle(), "COMMIT", nullptr, nullptr, nullptr); }

}  // namespace dragon::db::sqlite
