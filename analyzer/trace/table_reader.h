// Reading a table into packed rows (packed_rows.h): the SELECT names every
// column tables.def declares (row_reader.h), and each column fills the field
// of its name, so no reader spells out a table's shape or reads a column by
// its position. A merged trace's rows also say their process.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analyzer/trace/packed_rows.h"
#include "apptracer/row_reader.h"
#include "apptracer/sqlite.h"

namespace apptracer::trace {

namespace detail {

inline void read_packed(const Statement& s, int i, int64_t& v, TextPool&) { v = s.int64(i); }
inline void read_packed(const Statement& s, int i, NullableInt& v, TextPool&) {
  v = s.is_null(i) ? NullableInt() : NullableInt(s.int64(i));
}
inline void read_packed(const Statement& s, int i, double& v, TextPool&) { v = s.real(i); }
inline void read_packed(const Statement& s, int i, std::optional<double>& v, TextPool&) {
  v = s.is_null(i) ? std::optional<double>() : std::optional<double>(s.real(i));
}
inline void read_packed(const Statement& s, int i, TextRef& v, TextPool& texts) {
  v = s.is_null(i) ? kNoText : texts.add(s.text_view(i));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void read_packed(const Statement& s, int i, E& v, TextPool&) {
  v = static_cast<E>(s.int64(i));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void read_packed(const Statement& s, int i, std::optional<E>& v, TextPool&) {
  v = s.is_null(i) ? std::optional<E>() : std::optional<E>(static_cast<E>(s.int64(i)));
}

// The declared columns, then the row's process.
std::string packed_select(Database& db, const TableInfo& table);

// How many rows to make room for: how many the table holds.
size_t expected_rows(Database& db, const TableInfo& table);

}  // namespace detail

template <typename Row>
class PackedReader {
 public:
  // `rest`: what follows FROM table (WHERE, ORDER BY); may be empty.
  PackedReader(Database& db, TextPool& texts, std::string_view rest = {})
      : statement_(db.prepare(detail::packed_select(db, table_of<Row>()) + " " + std::string(rest))),
        texts_(&texts) {}

  // For the `?` parameters of `rest`; reset() before binding them again.
  Statement& statement() { return statement_; }

  // Fills `row` with the next row; false at the end.
  bool next(Packed<Row>& row) {
    if (!statement_.step()) return false;
    int index = 0;
    for_each_column(row, [&](auto& value) { detail::read_packed(statement_, index++, value, *texts_); });
    row.process = static_cast<ProcessId>(statement_.int64(index));
    return true;
  }

 private:
  Statement statement_;
  TextPool* texts_;
};

// Every row of Row's table in rowid order (ids ascending); none when the
// trace has no such table (an older trace, or one without that kind of event).
template <typename Row>
std::vector<Packed<Row>> read_rows(Database& db, TextPool& texts) {
  std::vector<Packed<Row>> rows;
  if (!db.has_table(Row::kTable)) return rows;
  rows.reserve(detail::expected_rows(db, table_of<Row>()));
  PackedReader<Row> reader(db, texts);
  Packed<Row> row;
  while (reader.next(row)) rows.push_back(row);
  return rows;
}

// visit(row) for each row in the order `rest` asks, holding one at a time.
template <typename Row, typename Visit>
void stream_rows(Database& db, TextPool& texts, std::string_view rest, Visit&& visit) {
  if (!db.has_table(Row::kTable)) return;
  PackedReader<Row> reader(db, texts, rest);
  Packed<Row> row;
  while (reader.next(row)) visit(std::as_const(row));
}

}  // namespace apptracer::trace
