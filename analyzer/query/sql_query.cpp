#include "analyzer/query/sql_query.h"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <memory>

namespace apptracer {

namespace {

struct StatementCloser {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

bool only_separators(const char* text) {
  for (; *text; ++text) {
    if (!std::isspace(static_cast<unsigned char>(*text)) && *text != ';') return false;
  }
  return true;
}

std::string hex_blob(const void* data, int size) {
  static const char digits[] = "0123456789abcdef";
  std::string text = "x'";
  for (int i = 0; i < size; ++i) {
    unsigned char byte = static_cast<const unsigned char*>(data)[i];
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text + "'";
}

Cell cell_of(sqlite3_stmt* statement, int column) {
  switch (sqlite3_column_type(statement, column)) {
    case SQLITE_INTEGER: return Cell{static_cast<int64_t>(sqlite3_column_int64(statement, column))};
    case SQLITE_FLOAT: return Cell{sqlite3_column_double(statement, column)};
    case SQLITE_TEXT:
      return Cell{std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, column)),
                              sqlite3_column_bytes(statement, column))};
    case SQLITE_BLOB:
      return Cell{hex_blob(sqlite3_column_blob(statement, column), sqlite3_column_bytes(statement, column))};
    default: return Cell{};
  }
}

// SQL functions a query may not call: fts3_tokenizer('simple') returns the
// address of SQLite's tokenizer module (and with two arguments installs one).
bool refused_function(const char* name) {
  return sqlite3_stricmp(name, "fts3_tokenizer") == 0 || sqlite3_stricmp(name, "load_extension") == 0;
}

// Keeps why the first refused part was refused in `refused` (a std::string).
int authorize(void* refused, int action, const char*, const char* function, const char*, const char*) {
  std::string why;
  if (action == SQLITE_ATTACH) {
    why = "ATTACH would open another database as SQLite does, creating files beside it (its "
          "-shm or journal); 'apptracer query' reads one trace (compare traces with 'apptracer "
          "diff', combine them with 'apptracer merge')";
  } else if (action == SQLITE_FUNCTION && function && refused_function(function)) {
    why = std::string(function) + "() reads or sets memory addresses; 'apptracer query' does not run it";
  } else {
    return SQLITE_OK;
  }
  auto* first = static_cast<std::string*>(refused);
  if (first->empty()) *first = why;
  return SQLITE_DENY;
}

// The time SQLite may spend on a statement: only inside sqlite3_step, so a
// reader that takes its time with the rows (a pager) does not use it up.
class TimeBudget {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TimeBudget(int64_t seconds) : left_(std::chrono::seconds(seconds)) {}

  void step_starts() { step_started_ = Clock::now(); }
  void step_ends() { left_ -= Clock::now() - step_started_; }
  bool spent() const { return spent_; }

  // An SQLite progress handler: non-zero stops the statement (SQLITE_INTERRUPT).
  static int stop_when_spent(void* budget) {
    auto* self = static_cast<TimeBudget*>(budget);
    self->spent_ = self->spent_ || Clock::now() - self->step_started_ >= self->left_;
    return self->spent_ ? 1 : 0;
  }

 private:
  Clock::duration left_;
  Clock::time_point step_started_;
  bool spent_ = false;
};

// Virtual machine instructions between two looks at the clock (~1 ms).
constexpr int kStepsBetweenClockReads = 100000;

std::string memory_limit_text() {
  int64_t limit = sqlite3_hard_heap_limit64(-1);
  return limit > 0 ? std::to_string(limit >> 20) + " MiB" : std::string("the memory available");
}

}  // namespace

void limit_query_memory(int64_t mib) {
  if (mib < 1 || mib > kMostQueryMemoryMib) {
    throw QueryError("a memory limit of " + std::to_string(mib) + " MiB: give 1 to " +
                     std::to_string(kMostQueryMemoryMib) + " MiB");
  }
  sqlite3_hard_heap_limit64(mib << 20);
}

void run_read_only_query(Database& db, const std::string& sql, RowSink& sink, int64_t timeout_s) {
  // Belt and braces: the connection is read-only already; query_only also
  // stops statements that write without touching the file (temp tables).
  db.exec("PRAGMA query_only = ON; PRAGMA temp_store = MEMORY");
  std::string refused;
  sqlite3_set_authorizer(db.handle(), authorize, &refused);
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int prepared = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &raw, &tail);
  sqlite3_set_authorizer(db.handle(), nullptr, nullptr);
  if (!refused.empty()) {
    sqlite3_finalize(raw);
    throw QueryError("refused: " + refused);
  }
  if (prepared != SQLITE_OK) {
    throw QueryError(std::string("invalid SQL: ") + sqlite3_errmsg(db.handle()));
  }
  std::unique_ptr<sqlite3_stmt, StatementCloser> statement(raw);
  if (!statement) throw QueryError("no SQL statement given");
  if (tail && !only_separators(tail)) {
    throw QueryError("one statement at a time, please: found more SQL after the first statement");
  }
  if (!sqlite3_stmt_readonly(statement.get())) {
    throw QueryError(
        "refused: the statement would modify the trace; 'apptracer query' only reads "
        "(use SELECT, or copy the trace and edit the copy with sqlite3)");
  }
  int columns = sqlite3_column_count(statement.get());
  std::vector<std::string> names;
  for (int i = 0; i < columns; ++i) {
    const char* name = sqlite3_column_name(statement.get(), i);
    names.push_back(name ? name : "");
  }
  sink.columns(names);
  TimeBudget budget(timeout_s);
  if (timeout_s > 0) {
    sqlite3_progress_handler(db.handle(), kStepsBetweenClockReads, TimeBudget::stop_when_spent, &budget);
  }
  struct HandlerRemover {
    sqlite3* db;
    ~HandlerRemover() { sqlite3_progress_handler(db, 0, nullptr, nullptr); }
  } remove_handler{db.handle()};
  for (;;) {
    budget.step_starts();
    int rc = sqlite3_step(statement.get());
    budget.step_ends();
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_INTERRUPT && budget.spent()) {
      throw QueryError("the query ran past --timeout " + std::to_string(timeout_s) +
                       " s and was stopped: narrow it with WHERE or LIMIT (a recursive query needs "
                       "a condition that ends it), or raise --timeout");
    }
    if ((rc & 0xff) == SQLITE_NOMEM) {
      throw QueryError("the query needs more than " + memory_limit_text() + " of memory (sorting, "
                       "DISTINCT, GROUP BY or a recursive query hold their rows there): narrow it "
                       "with WHERE or LIMIT, or raise --memory-limit");
    }
    if (rc != SQLITE_ROW) throw QueryError(std::string("query failed: ") + sqlite3_errmsg(db.handle()));
    std::vector<Cell> row;
    row.reserve(static_cast<size_t>(columns));
    for (int i = 0; i < columns; ++i) row.push_back(cell_of(statement.get(), i));
    sink.row(std::move(row));
  }
}

Table run_read_only_query(Database& db, const std::string& sql) {
  struct Collect : RowSink {
    Table table;
    void columns(const std::vector<std::string>& names) override { table.columns = names; }
    void row(std::vector<Cell> cells) override { table.rows.push_back(std::move(cells)); }
  } collect;
  run_read_only_query(db, sql, collect);
  return std::move(collect.table);
}

}  // namespace apptracer
