// The trace database schema, generated from tables.def: the contract between
// tracer and analyzer.
#include "apptracer/schema.h"

#include <string>

#include "apptracer/enums.h"
#include "apptracer/tables.h"

namespace apptracer {

namespace {

std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

bool is_trace_table(const TableInfo& table) {
  return table.role == TableRole::Meta || table.role == TableRole::Trace;
}

// What a table says about itself in schema_tables and schema_columns.
std::string table_description_sql(const TableInfo& table) {
  std::string sql = "INSERT OR REPLACE INTO schema_tables VALUES (" + quoted(table.name) + ", " +
                    quoted(to_string(table.role)) + ", " + quoted(table.doc) + ");\n";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnInfo& c = table.columns[i];
    sql += "INSERT OR REPLACE INTO schema_columns VALUES (" + quoted(table.name) + ", " + quoted(c.name) +
           ", " + std::to_string(i) + ", " + quoted(c.sql_type) + ", " +
           quoted(to_string(c.meaning.role)) + ", " +
           (c.meaning.target ? quoted(c.meaning.target) : std::string("NULL")) + ", " +
           quoted(c.doc) + ");\n";
  }
  return sql;
}

// What every trace says about its own tables and enums.
std::string self_description_sql() {
  std::string sql;
  for (const EnumValue& v : all_enum_values()) {
    sql += "INSERT INTO enum_values VALUES (" + quoted(v.enum_name) + ", " +
           std::to_string(v.value) + ", " + quoted(v.name) + ");\n";
  }
  for (const TableInfo& table : all_tables()) {
    if (is_trace_table(table)) sql += table_description_sql(table);
  }
  return sql;
}

}  // namespace

std::string trace_schema_sql() { return trace_tables_sql() + trace_indexes_sql(); }

std::string trace_tables_sql() {
  std::string sql;
  for (const TableInfo& table : all_tables()) {
    if (!is_trace_table(table)) continue;
    sql += create_table_sql(table);
    sql += create_indexes_sql(table, Indexes::Live);
  }
  for (const ViewInfo& view : all_views()) {
    if (view.role == TableRole::Trace) sql += create_view_sql(view);
  }
  sql += self_description_sql();
  sql += "INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "');\n";
  return sql;
}

std::string analysis_table_sql(const TableInfo& table, bool describe) {
  std::string sql = create_table_sql(table) + create_indexes_sql(table);
  return describe ? sql + table_description_sql(table) : sql;
}

std::string trace_indexes_sql() {
  std::string sql;
  for (const TableInfo* table : tables_with_role(TableRole::Trace)) {
    sql += create_indexes_sql(*table, Indexes::AtEnd);
  }
  return sql;
}

}  // namespace apptracer
