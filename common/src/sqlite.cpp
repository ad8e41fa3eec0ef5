#include "apptracer/sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace apptracer {

namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw SqliteError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Database::Database(const std::string& path, Mode mode) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::ReadOnly: flags |= SQLITE_OPEN_READONLY; break;
    case Mode::ReadWrite: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::Create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
  }
  open(path, flags, "");
}

Database Database::open_read_only_uri(const std::string& uri, const std::string& vfs) {
  Database db;
  db.open(uri, SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, vfs);
  return db;
}

Database Database::reopen_read_only() const {
  Database db;
  db.open(name_, (flags_ & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY,
          vfs_);
  return db;
}

bool Database::shares_what_it_reads() const {
  if (!db_) return false;
  const char* file = sqlite3_db_filename(db_, "main");
  return file && *file && sqlite3_db_readonly(db_, "main") == 1;
}

void Database::open(const std::string& name, int flags, const std::string& vfs) {
  name_ = name;
  flags_ = flags;
  vfs_ = vfs;
  if (sqlite3_open_v2(name.c_str(), &db_, flags, vfs.empty() ? nullptr : vfs.c_str()) !=
      SQLITE_OK) {
    std::string message = std::string("cannot open ") + name + ": " +
                          (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(message);
  }
  sqlite3_extended_result_codes(db_, 1);
  // A reader may meet a trace the tracer is still writing; wait briefly
  // instead of failing at once.
  sqlite3_busy_timeout(db_, 5000);
}

Database::~Database() { close(); }

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      insert_thread_(std::exchange(other.insert_thread_, nullptr)),
      name_(std::move(other.name_)),
      flags_(other.flags_),
      vfs_(std::move(other.vfs_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    insert_thread_ = std::exchange(other.insert_thread_, nullptr);
    name_ = std::move(other.name_);
    flags_ = other.flags_;
    vfs_ = std::move(other.vfs_);
  }
  return *this;
}

void Database::close() {
  if (db_) {
    if (insert_thread_) insert_thread_->settle();
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

void Database::exec(std::string_view sql) {
  enter();
  char* error = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw SqliteError(message);
  }
}

Statement Database::prepare(std::string_view sql) {
  enter();
  return Statement(db_, sql, insert_thread_);
}

int64_t Database::last_insert_rowid() const {
  enter();
  return sqlite3_last_insert_rowid(db_);
}

int64_t Database::changes() const {
  enter();
  return sqlite3_changes64(db_);
}

bool Database::has_table(const std::string& name) {
  Statement query = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, name);
  return query.step();
}

bool Database::has_column(const std::string& table, const std::string& column) {
  Statement columns = prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  columns.bind(1, table).bind(2, column);
  return columns.step();
}

Statement::Statement(sqlite3* db, std::string_view sql, InsertThread* insert_thread)
    : db_(db), insert_thread_(insert_thread) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    fail(db, "cannot prepare statement");
  }
}

Statement::~Statement() {
  if (stmt_) settle();
  sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      insert_thread_(other.insert_thread_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) settle();
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    insert_thread_ = other.insert_thread_;
  }
  return *this;
}

Statement& Statement::bind(int index, double value) {
  enter();
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail_bind();
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  enter();
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    fail_bind();
  }
  return *this;
}

void Statement::fail_bind() const { fail(db_, "bind"); }

bool Statement::step() {
  enter();
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "query failed");
}

void Statement::run() {
  step();
  reset();
}

void Statement::run_rebinding_all() {
  enter();
  step();
  sqlite3_reset(stmt_);
}

void Statement::reset() {
  enter();
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const {
  enter();
  return sqlite3_column_count(stmt_);
}
bool Statement::is_null(int column) const {
  enter();
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::int64(int column) const {
  enter();
  return sqlite3_column_int64(stmt_, column);
}
double Statement::real(int column) const {
  enter();
  return sqlite3_column_double(stmt_, column);
}
std::string Statement::text(int column) const {
  enter();
  const unsigned char* value = sqlite3_column_text(stmt_, column);
  return value ? std::string(reinterpret_cast<const char*>(value)) : std::string();
}
std::string_view Statement::text_view(int column) const {
  enter();
  const unsigned char* value = sqlite3_column_text(stmt_, column);
  if (!value) return {};
  return std::string_view(reinterpret_cast<const char*>(value),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}
std::optional<int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}
std::string Statement::column_name(int column) const {
  enter();
  const char* name = sqlite3_column_name(stmt_, column);
  return name ? name : "";
}
int Statement::column_type(int column) const {
  enter();
  return sqlite3_column_type(stmt_, column);
}

}  // namespace apptracer
