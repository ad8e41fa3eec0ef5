// Inserting a row struct (tables.h) into its table: the statement names
// every declared column, and each field binds to its own column, so a row is
// filled by name and a new column needs no edit here.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "apptracer/sqlite.h"
#include "apptracer/tables.h"

namespace apptracer {

namespace detail {

inline void bind_column(Statement& s, int i, const I64& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const OptI64& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const Real& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const OptReal& v) {
  if (v) {
    s.bind(i, *v);
  } else {
    s.bind_null(i);
  }
}
inline void bind_column(Statement& s, int i, const Text& v) { s.bind(i, std::string_view(v)); }
inline void bind_column(Statement& s, int i, const OptText& v) {
  if (v) {
    s.bind(i, std::string_view(*v));
  } else {
    s.bind_null(i);
  }
}
inline void bind_column(Statement& s, int i, const RowId& v) { s.bind(i, v.value); }
inline void bind_column(Statement& s, int i, const TextKey& v) {
  s.bind(i, std::string_view(v.value));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void bind_column(Statement& s, int i, E v) {
  s.bind(i, static_cast<int64_t>(v));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void bind_column(Statement& s, int i, const std::optional<E>& v) {
  s.bind(i, v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt);
}

// "(?,?,...)" for `columns`, `rows` times, comma separated.
std::string value_tuples(size_t columns, size_t rows);

}  // namespace detail

enum class OnConflict { Fail, Replace };

template <typename Row>
class RowInserter {
 public:
  RowInserter() = default;
  // Replace: INSERT OR REPLACE, for storing a row again under its id.
  explicit RowInserter(Database& db, OnConflict conflict = OnConflict::Fail)
      : db_(&db), statement_(db.prepare(sql(conflict, 1))) {}

  // Returns the row's rowid.
  int64_t insert(const Row& row) {
    bind(statement_, 0, row);
    statement_.run_rebinding_all();
    return db_->last_insert_rowid();
  }

 protected:
  static std::string sql(OnConflict conflict, size_t rows) {
    std::string head = conflict == OnConflict::Replace ? "INSERT OR REPLACE" : "INSERT";
    std::string single = insert_sql(table_of<Row>());
    // insert_sql is "INSERT INTO t (columns) VALUES (?,...)": keep its head.
    std::string columns = single.substr(6, single.find(" VALUES ") - 6);
    return head + columns + " VALUES " +
           detail::value_tuples(table_of<Row>().columns.size(), rows);
  }
  static void bind(Statement& statement, int first, const Row& row) {
    int index = first + 1;
    for_each_column(row, [&](const auto& value) { detail::bind_column(statement, index++, value); });
  }

  Database* db_ = nullptr;
  Statement statement_;
};

// Inserts rows several at a time: one multi-row INSERT costs SQLite little
// more than a one-row one, so the writer's cost per row drops. Rows are only
// in the database after flush() (or once a batch fills): a caller that needs
// a row's id assigns it itself, and flushes before it commits or replaces a
// row it inserted here.
template <typename Row>
class BatchInserter : public RowInserter<Row> {
 public:
  // 128 rather than 32: the statement's per-run cost (reset, halt, statement
  // journal) spread over more rows took 5% off the writer's instructions.
  // Fewer where SQLite allows fewer parameters (999 before 3.32; a copy has 26 columns).
  static constexpr size_t kMaxBatchRows = 128;

  BatchInserter() = default;
  explicit BatchInserter(Database& db)
      : RowInserter<Row>(db),
        batch_rows_(std::min(kMaxBatchRows, static_cast<size_t>(sqlite3_limit(
                                                db.handle(), SQLITE_LIMIT_VARIABLE_NUMBER, -1)) /
                                                columns())),
        batch_(db.prepare(RowInserter<Row>::sql(OnConflict::Fail, batch_rows_))) {}

  void add(const Row& row) {
    if (pending_ < batch_rows_) {
      rows_[pending_++] = row;
      if (pending_ < batch_rows_) return;
    }
    for (size_t i = 0; i < batch_rows_; ++i) {
      RowInserter<Row>::bind(batch_, static_cast<int>(i * columns()), rows_[i]);
    }
    batch_.run_rebinding_all();
    pending_ = 0;
  }

  void flush() {
    for (size_t i = 0; i < pending_; ++i) RowInserter<Row>::insert(rows_[i]);
    pending_ = 0;
  }

 private:
  static size_t columns() { return table_of<Row>().columns.size(); }

  size_t batch_rows_ = 0;
  Statement batch_;
  Row rows_[kMaxBatchRows];
  size_t pending_ = 0;
};

}  // namespace apptracer
