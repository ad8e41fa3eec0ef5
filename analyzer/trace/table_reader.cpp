#include "analyzer/trace/table_reader.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>

#include "analyzer/trace/schema_version.h"
#include "analyzer/trace/trace_file.h"
#include "apptracer/schema.h"

namespace apptracer::trace::detail {

std::string packed_select(Database& db, const TableInfo& table, const ColumnNames& wanted) {
  // An older trace lacks the columns declared since, which read as none or
  // as their default. A trace of this version lacking a column that always
  // holds a value is damaged: a default read in its place would be shown
  // as recorded.
  if (trace_schema_version(db) == kSchemaVersion) {
    for (const ColumnInfo& column : table.columns) {
      bool always_holds_a_value = column.sql_type.find("NOT NULL") != std::string::npos;
      if (always_holds_a_value && !db.has_column(table.name, column.name))
        throw DamagedTrace(table.name + " has no column " + column.name +
                           " (no such column), though its schema version declares it; is it damaged?");
    }
  }
  bool merged = db.has_column(table.name, "process_id");
  return apptracer::detail::select_sql(
      db, table, merged ? ", coalesce(process_id, 1)" : ", " + std::to_string(kSingleProcess), wanted);
}

std::vector<bool> decoded_columns(const TableInfo& table, const ColumnNames& wanted) {
  if (wanted.empty()) return {};
  std::vector<bool> decoded;
  decoded.reserve(table.columns.size());
  for (const ColumnInfo& column : table.columns) {
    decoded.push_back(std::find(wanted.begin(), wanted.end(), column.name) != wanted.end());
  }
  return decoded;
}

size_t expected_rows(Database& db, const TableInfo& table) {
  // Counted, not guessed from the largest rowid: ids need not be dense (a
  // trace made by repeating steps numbers each table's rows from a shared
  // count), and a guess too small grows the rows by copying them, one too
  // large holds memory no row uses. Counting walks the table's pages
  // without reading its rows.
  Statement count = db.prepare("SELECT count(*) FROM " + table.name);
  int64_t rows = count.step() ? count.int64(0) : 0;
  return rows > 0 ? static_cast<size_t>(rows) : 0;
}

namespace {

// [min, max] of the table's rowids split into `parts` ranges of equal width:
// ids need not be dense, but the tables' rows spread over their ids evenly
// enough (a trace made by repeating steps numbers them from a count all
// tables share). The first starts at INT64_MIN; none when the table is empty.
std::vector<RowidRange> equal_rowid_spans(Database& db, const TableInfo& table, size_t parts) {
  // Two subqueries: SQLite finds a lone min() or max() of the rowid at an
  // end of the table's b-tree, but both in one SELECT scan every row (0.14 s
  // for a million kernels, once per table read on several threads).
  std::string from = " FROM \"" + table.name + "\")";
  Statement bounds = db.prepare("SELECT (SELECT min(rowid)" + from + ", (SELECT max(rowid)" + from);
  if (!bounds.step() || bounds.is_null(0)) return {};
  uint64_t first = static_cast<uint64_t>(bounds.int64(0));
  uint64_t width = static_cast<uint64_t>(bounds.int64(1)) - first;
  uint64_t span = width / parts + 1;
  std::vector<RowidRange> ranges;
  for (size_t i = 0; i < parts; ++i) {
    uint64_t begin = first + span * i;
    if (begin > first + width) break;
    ranges.emplace_back(static_cast<int64_t>(begin), static_cast<int64_t>(begin + (span - 1)));
  }
  ranges.front().first = INT64_MIN;
  ranges.back().second = static_cast<int64_t>(first + width);
  return ranges;
}

}  // namespace

std::vector<RowidRange> reading_ranges(Database& db, const TableInfo& table, size_t rows,
                                       size_t max_readers) {
  // Fewer rows per reader than this spend more on opening a connection and
  // starting a thread than they save.
  constexpr size_t kRowsPerReader = 65536;
  const std::vector<RowidRange> every_rowid{{INT64_MIN, INT64_MAX}};
  size_t readers = std::min(max_readers, rows / kRowsPerReader);
  if (readers < 2 || !db.shares_what_it_reads()) return every_rowid;
  std::vector<RowidRange> ranges = equal_rowid_spans(db, table, readers);
  return ranges.empty() ? every_rowid : ranges;
}

std::vector<RowidRange> rowid_chunks(Database& db, const TableInfo& table, size_t rows, size_t rows_per_chunk) {
  size_t chunks = rows / std::max<size_t>(1, rows_per_chunk);
  if (chunks < 2) return {};
  return equal_rowid_spans(db, table, chunks);
}

size_t rows_in(Database& db, const TableInfo& table, RowidRange range) {
  Statement count = db.prepare("SELECT count(*) FROM \"" + table.name + "\" WHERE rowid BETWEEN ? AND ?");
  count.bind(1, range.first).bind(2, range.second);
  return count.step() ? static_cast<size_t>(count.int64(0)) : 0;
}

void changed_while_read(const TableInfo& table) {
  throw TraceError(table.name + " changed while it was read; read the trace again once its recording is done");
}

Database scanning_connection(const Database& db) {
  Database scanning = db.reopen_read_only();
  scanning.exec("PRAGMA cache_size = -256");  // KiB
  return scanning;
}

size_t default_readers() {
  unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores, 1, 8);
}

void run_on_threads(size_t count, const std::function<void(size_t)>& run) {
  std::vector<std::exception_ptr> errors(count);
  auto guarded = [&](size_t i) {
    try {
      run(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  size_t i = 0;
  try {
    for (; i < count; ++i) threads.emplace_back(guarded, i);
  } catch (const std::system_error&) {
    // No thread to be had: the rest run here.
    for (; i < count; ++i) guarded(i);
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace apptracer::trace::detail
