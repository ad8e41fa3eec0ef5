// Reading a table into its row structs (tables.h): the SELECT names every
// declared column and each column fills its own field, so a reader never
// spells out a table's shape and a new column reaches it unasked.
//
//   for_each_row<MemcpyRow>(db, "WHERE kind = 1 ORDER BY id", [&](const MemcpyRow& copy) {...});
//
// A column the file lacks (a trace written before it was declared) reads as
// its field's default: NULL, 0 or "".
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "apptracer/sqlite.h"
#include "apptracer/tables.h"

namespace apptracer {

// The columns a reader decodes; empty: all. The others read as zero or none.
using ColumnNames = std::vector<std::string_view>;

namespace detail {

inline void read_column(const Statement& s, int i, I64& v) { v = s.int64(i); }
inline void read_column(const Statement& s, int i, OptI64& v) { v = s.optional_int64(i); }
inline void read_column(const Statement& s, int i, Real& v) { v = s.real(i); }
inline void read_column(const Statement& s, int i, OptReal& v) {
  v = s.is_null(i) ? OptReal() : OptReal(s.real(i));
}
inline void read_column(const Statement& s, int i, Text& v) { v = s.text(i); }
inline void read_column(const Statement& s, int i, OptText& v) {
  v = s.is_null(i) ? OptText() : OptText(s.text(i));
}
inline void read_column(const Statement& s, int i, RowId& v) { v.value = s.optional_int64(i); }
inline void read_column(const Statement& s, int i, TextKey& v) { v.value = s.text(i); }
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void read_column(const Statement& s, int i, E& v) {
  v = static_cast<E>(s.int64(i));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void read_column(const Statement& s, int i, std::optional<E>& v) {
  v = s.is_null(i) ? std::optional<E>() : std::optional<E>(static_cast<E>(s.int64(i)));
}

// "SELECT a, b, NULL, ... FROM table": NULL for columns `db` lacks, and for
// those `wanted` leaves out when it names any (SQLite decodes no column it
// is not asked for, most of what reading a large table costs); then `extra`
// (", expression ...") after the declared columns, when given.
std::string select_sql(Database& db, const TableInfo& table, std::string_view extra = {},
                       const ColumnNames& wanted = {});

}  // namespace detail

template <typename Row>
class RowReader {
 public:
  // `rest`: what follows FROM table (WHERE, ORDER BY, LIMIT); may be empty.
  RowReader(Database& db, std::string_view rest = {})
      : statement_(db.prepare(detail::select_sql(db, table_of<Row>()) + " " + std::string(rest))) {}

  // Fills `row` with the next row; false at the end.
  bool next(Row& row) {
    if (!statement_.step()) return false;
    int index = 0;
    for_each_column(row, [&](auto& value) { detail::read_column(statement_, index++, value); });
    return true;
  }

  // For a WHERE clause's `?` parameters.
  Statement& statement() { return statement_; }

 private:
  Statement statement_;
};

// One row by id, read again and again through one prepared statement.
template <typename Row>
class RowById {
 public:
  explicit RowById(Database& db) : reader_(db, "WHERE id = ?") {}

  // False when no row has that id. The statement is reset after reading, so
  // no read stays open across the caller's writes and commits.
  bool read(int64_t id, Row& row) {
    Statement& statement = reader_.statement();
    statement.bind(1, id);
    bool found = reader_.next(row);
    statement.reset();
    return found;
  }

 private:
  RowReader<Row> reader_;
};

template <typename Row, typename Visit>
void for_each_row(Database& db, std::string_view rest, Visit&& visit) {
  RowReader<Row> reader(db, rest);
  Row row;
  while (reader.next(row)) visit(std::as_const(row));
}

}  // namespace apptracer
