// A thin RAII layer over the SQLite C API, shared by the tracer's writer and
// the analyzer. Errors become apptracer::SqliteError with SQLite's message.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <sqlite3.h>

namespace apptracer {

class SqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement;

class Database {
 public:
  enum class Mode { ReadOnly, ReadWrite, Create };

  Database() = default;
  Database(const std::string& path, Mode mode);
  // Opens an SQLite URI ("file:t.db?immutable=1") read-only through the VFS
  // named `vfs` (empty: SQLite's default).
  static Database open_read_only_uri(const std::string& uri, const std::string& vfs = "");
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  bool is_open() const { return db_ != nullptr; }
  // Another connection to the same file, opened the same way but read-only
  // (a second reader thread).
  Database reopen_read_only() const;
  // Whether a connection of reopen_read_only() reads what this one does: this
  // one is a read-only connection to a file. An in-memory database is its
  // connection's alone, and a writer's uncommitted rows are the writer's.
  bool shares_what_it_reads() const;
  void close();

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  int64_t changes() const;  // rows the last INSERT/UPDATE/DELETE touched
  bool has_table(const std::string& name);
  bool has_column(const std::string& table, const std::string& column);
  sqlite3* handle() const { return db_; }

 private:
  void open(const std::string& name, int flags, const std::string& vfs);

  sqlite3* db_ = nullptr;
  // How it was opened, for reopen_read_only().
  std::string name_;
  int flags_ = 0;
  std::string vfs_;
};

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite. The integer ones are
  // inline: the writer binds a dozen per row, and the calls showed in its profile.
  Statement& bind(int index, int64_t value) {
    if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail_bind();
    return *this;
  }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index) {
    if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail_bind();
    return *this;
  }
  Statement& bind(int index, const std::optional<int64_t>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Steps once: true while a row is available.
  bool step();
  // Steps a statement that returns no rows, then resets it for reuse.
  void run();
  // The same, keeping the bindings (for a caller that binds every parameter
  // each time: clearing them costs time on every row).
  void run_rebinding_all();
  void reset();

  int column_count() const;
  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  // The same without a copy: valid until the next step, reset or read of the column.
  std::string_view text_view(int column) const;
  std::optional<int64_t> optional_int64(int column) const;
  std::string column_name(int column) const;
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int column_type(int column) const;

 private:
  [[noreturn]] void fail_bind() const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs `body` inside BEGIN/COMMIT; rolls back if it throws.
template <typename Body>
void with_transaction(Database& db, Body&& body) {
  db.exec("BEGIN");
  try {
    body();
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
  db.exec("COMMIT");
}

}  // namespace apptracer
