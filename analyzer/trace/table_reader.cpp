#include "analyzer/trace/table_reader.h"

#include <algorithm>

#include "analyzer/trace/schema_version.h"
#include "analyzer/trace/trace_file.h"
#include "apptracer/schema.h"

namespace apptracer::trace::detail {

std::string packed_select(Database& db, const TableInfo& table) {
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
      db, table, merged ? ", coalesce(process_id, 1)" : ", " + std::to_string(kSingleProcess));
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

}  // namespace apptracer::trace::detail
