// Reading a table into packed rows (packed_rows.h): the SELECT names every
// column tables.def declares (row_reader.h), and each column fills the field
// of its name, so no reader spells out a table's shape or reads a column by
// its position. A merged trace's rows also say their process.
//
// Decoding SQLite's rows is most of what reading a large trace costs, so a
// large table is read by several threads at once, each over its own range
// of rowids with its own connection (read_rows), where another connection
// can read what the trace's does.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
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
template <typename Declared>
void read_packed(const Statement& s, int i, NullableNarrowInt<Declared>& v, TextPool&) {
  v = s.is_null(i) ? NullableNarrowInt<Declared>() : NullableNarrowInt<Declared>(s.int64(i));
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

// The declared columns (NULL for those `wanted` leaves out when it names
// any), then the row's process.
std::string packed_select(Database& db, const TableInfo& table, const ColumnNames& wanted = {});

// Which of the table's columns `wanted` names, in declaration order; empty
// when it names none (every column is decoded).
std::vector<bool> decoded_columns(const TableInfo& table, const ColumnNames& wanted);

// How many rows to make room for: how many the table holds.
size_t expected_rows(Database& db, const TableInfo& table);

// Whether Row has a text column. Text goes to the trace's one TextPool,
// which only its own thread fills: such a table is read on that thread.
template <typename Row>
inline constexpr bool kHasTextColumn = false;
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc) \
  template <>                                               \
  inline constexpr bool kHasTextColumn<RowType> = false
#define APPTRACER_COLUMN(name, type, meaning, doc) || kIsTextColumn<type>
#define APPTRACER_END_TABLE() ;
#include "apptracer/tables.def"

using RowidRange = std::pair<int64_t, int64_t>;  // [first, last]

// The rowid ranges to read a table of `rows` rows in, a thread each: one
// (every rowid) unless the table holds two readers' worth of rows and
// another connection can read what `db` does; at most `max_readers`. They
// end at the table's largest rowid now: rows a writer adds later are not
// read, as a single statement would not see them.
std::vector<RowidRange> reading_ranges(Database& db, const TableInfo& table, size_t rows,
                                       size_t max_readers);
// Consecutive rowid ranges of about `rows_per_chunk` of the table's `rows`
// rows each, covering every rowid it holds now, for reading a table in
// order a chunk at a time on several threads; none when it holds fewer
// than two chunks' worth.
std::vector<RowidRange> rowid_chunks(Database& db, const TableInfo& table, size_t rows, size_t rows_per_chunk);

// How many threads read one large table: the machine's cores, up to 8 (a
// bound on the connections, and their page caches, one read opens; more
// were not measured).
size_t default_readers();
// Another connection to what `db` reads, for one pass over a table in rowid
// order: with a page cache of a few pages rather than SQLite's 2 MB, as a
// scan reads each page once, and several of them at once held megabytes at
// the peaks of diagnose and the report.
Database scanning_connection(const Database& db);

// run(i) for each i in [0, count), each on a thread of its own; when all
// have ended, rethrows the first exception one of them threw.
void run_on_threads(size_t count, const std::function<void(size_t)>& run);

}  // namespace detail

template <typename Row>
class PackedReader {
 public:
  // `rest`: what follows FROM table (WHERE, ORDER BY); may be empty.
  PackedReader(Database& db, TextPool& texts, std::string_view rest = {}, const ColumnNames& wanted = {})
      : statement_(db.prepare(detail::packed_select(db, table_of<Row>(), wanted) + " " + std::string(rest))),
        texts_(&texts),
        decoded_(detail::decoded_columns(table_of<Row>(), wanted)) {}

  // For the `?` parameters of `rest`; reset() before binding them again.
  Statement& statement() { return statement_; }

  // Fills `row` with the next row; false at the end.
  bool next(Packed<Row>& row) {
    if (!statement_.step()) return false;
    int index = 0;
    for_each_column(row, [&](auto& value) {
      if (decoded_.empty() || decoded_[index]) detail::read_packed(statement_, index, value, *texts_);
      ++index;
    });
    row.process = static_cast<ProcessId>(statement_.int64(index));
    return true;
  }

 private:
  Statement statement_;
  TextPool* texts_;
  // Which columns next() decodes (empty: all). The others are NULL in the
  // SELECT and keep their fields' defaults: asking SQLite a NULL column's
  // type is still a call per column and row, a fifth of a pass over a
  // million kernels for three of their columns.
  std::vector<bool> decoded_;
};

namespace detail {

// How many rows of `table` lie in `range`.
size_t rows_in(Database& db, const TableInfo& table, RowidRange range);
// For a range that held other rows when read than when counted.
[[noreturn]] void changed_while_read(const TableInfo& table);

// Row's table read in `ranges`, each by a thread and connection of its own:
// each range is counted, then read straight into its place in rowid order.
// Nothing is held twice, and no reading thread keeps memory for itself that
// the command could not use afterwards.
template <typename Row>
std::vector<Packed<Row>> read_ranges(const Database& db, const std::vector<RowidRange>& ranges) {
  std::vector<Database> connections;
  for (size_t i = 0; i < ranges.size(); ++i) connections.push_back(scanning_connection(db));
  std::vector<size_t> counts(ranges.size());
  run_on_threads(ranges.size(),
                 [&](size_t i) { counts[i] = rows_in(connections[i], table_of<Row>(), ranges[i]); });
  std::vector<size_t> offsets(ranges.size(), 0);
  for (size_t i = 1; i < ranges.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<Packed<Row>> rows(offsets.back() + counts.back());
  run_on_threads(ranges.size(), [&](size_t i) {
    TextPool no_text;
    PackedReader<Row> reader(connections[i], no_text, "WHERE rowid BETWEEN ? AND ?");
    reader.statement().bind(1, ranges[i].first).bind(2, ranges[i].second);
    Packed<Row>* place = rows.data() + offsets[i];
    size_t left = counts[i];
    Packed<Row> row;
    while (reader.next(row)) {
      if (left-- == 0) changed_while_read(table_of<Row>());
      *place++ = row;
    }
    if (left != 0) changed_while_read(table_of<Row>());
  });
  return rows;
}

}  // namespace detail

// Every row of Row's table in rowid order (ids ascending); none when the
// trace has no such table (an older trace, or one without that kind of event).
template <typename Row>
std::vector<Packed<Row>> read_rows(Database& db, TextPool& texts) {
  std::vector<Packed<Row>> rows;
  if (!db.has_table(Row::kTable)) return rows;
  size_t expected = detail::expected_rows(db, table_of<Row>());
  if constexpr (!detail::kHasTextColumn<Row>) {
    std::vector<detail::RowidRange> ranges =
        detail::reading_ranges(db, table_of<Row>(), expected, detail::default_readers());
    if (ranges.size() > 1) return detail::read_ranges<Row>(db, ranges);
  }
  rows.reserve(expected);
  PackedReader<Row> reader(db, texts);
  Packed<Row> row;
  while (reader.next(row)) rows.push_back(row);
  return rows;
}

}  // namespace apptracer::trace
