#include "analyzer/trace/declared_tables.h"

#include <optional>
#include <string>

#include "analyzer/trace/schema_version.h"
#include "analyzer/trace/trace_file.h"
#include "apptracer/schema.h"
#include "apptracer/tables.h"

namespace apptracer::trace {

void require_declared_tables(Database& db) {
  // open_trace has refused a version that is no number.
  std::optional<int> version = trace_schema_version(db);
  if (!version) return;
  bool current = *version == kSchemaVersion;
  bool too_old = *version < kOldestReadableSchemaVersion;
  if (!current && !too_old) return;
  auto added_later = [&](const std::string& name) {
    for (const TableAddedLater& later : kTablesAddedLater) {
      if (name == later.table && *version < later.version) return true;
    }
    return false;
  };
  for (const TableInfo* table : tables_with_role(TableRole::Trace)) {
    if (db.has_table(table->name) || added_later(table->name)) continue;
    std::string lacks = "the trace has no table " + table->name + " (no such table)";
    if (too_old) throw SqliteError(lacks);
    throw DamagedTrace(lacks + ", though its schema version declares it; is it damaged?");
  }
  // A trace of this version lacking a column is refused where the column is
  // read (table_reader.cpp); an older one lacks what this apptracer needs.
  if (!too_old) return;
  for (const TableInfo* table : tables_with_role(TableRole::Trace)) {
    if (added_later(table->name)) continue;
    for (const ColumnInfo& column : table->columns) {
      bool always_holds_a_value = column.sql_type.find("NOT NULL") != std::string::npos;
      if (always_holds_a_value && !db.has_column(table->name, column.name)) {
        throw SqliteError(table->name + " has no column " + column.name + " (no such column)");
      }
    }
  }
}

}  // namespace apptracer::trace
