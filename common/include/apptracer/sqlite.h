// A thin RAII layer over the SQLite C API, shared by the tracer's writer and
// the analyzer. Errors become apptracer::SqliteError with SQLite's message.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "apptracer/insert_thread.h"

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
  // For a direct sqlite3_* call: the insert thread has finished first.
  sqlite3* handle() const {
    enter();
    return db_;
  }

  // Full batches of this connection's BatchInserters run on `thread` from
  // now on (InsertThread says how the connection's other uses wait). Set
  // before any statement is prepared; `thread` outlives the connection.
  void use_insert_thread(InsertThread* thread) { insert_thread_ = thread; }
  InsertThread* insert_thread() const { return insert_thread_; }

 private:
  void open(const std::string& name, int flags, const std::string& vfs);
  void enter() const {
    if (insert_thread_) insert_thread_->enter();
  }

  sqlite3* db_ = nullptr;
  InsertThread* insert_thread_ = nullptr;
  // How it was opened, for reopen_read_only().
  std::string name_;
  int flags_ = 0;
  std::string vfs_;
};

class Statement {
 public:
  Statement() = default;
  // `insert_thread`: the connection's (Database::use_insert_thread), waited
  // for before each use of the statement.
  Statement(sqlite3* db, std::string_view sql, InsertThread* insert_thread = nullptr);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite. The integer ones are
  // inline: the writer binds a dozen per row, and the calls showed in its profile.
  Statement& bind(int index, int64_t value) {
    enter();
    if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail_bind();
    return *this;
  }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index) {
    enter();
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

  // A batch statement, used only on the connection's insert thread while
  // it runs the batch: it does not wait for that thread.
  void leave_to_insert_thread() { insert_thread_ = nullptr; }

 private:
  [[noreturn]] void fail_bind() const;
  void enter() const {
    if (insert_thread_) insert_thread_->enter();
  }
  // Before finalizing, which must not throw.
  void settle() const {
    if (insert_thread_) insert_thread_->settle();
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  InsertThread* insert_thread_ = nullptr;
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
