#include "apptracer/tables.h"

#include <algorithm>

namespace apptracer {

std::string_view to_string(TableRole role) {
  switch (role) {
    case TableRole::Meta: return "meta";
    case TableRole::Trace: return "trace";
    case TableRole::Analysis: return "analysis";
    case TableRole::Merge: return "merge";
  }
  return "?";
}

std::string_view to_string(ColumnRole role) {
  switch (role) {
    case ColumnRole::Plain: return "plain";
    case ColumnRole::Id: return "id";
    case ColumnRole::Ref: return "ref";
    case ColumnRole::Key: return "key";
    case ColumnRole::Enum: return "enum";
    case ColumnRole::String: return "string";
    case ColumnRole::Correlation: return "correlation";
    case ColumnRole::Tid: return "tid";
    case ColumnRole::Stream: return "stream";
    case ColumnRole::Device: return "device";
    case ColumnRole::Time: return "time";
    case ColumnRole::Duration: return "duration";
    case ColumnRole::Address: return "address";
    case ColumnRole::Bytes: return "bytes";
    case ColumnRole::Handle: return "handle";
    case ColumnRole::Process: return "process";
  }
  return "?";
}

namespace {

// A trailing underscore lets a column be named like a C++ keyword (tables.def).
std::string sql_name(const char* declared) {
  std::string name = declared;
  if (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

template <typename T>
ColumnInfo column_info(const char* name, ColumnMeaning meaning, const char* doc) {
  if (ColumnType<T>::enum_name) meaning = {ColumnRole::Enum, ColumnType<T>::enum_name};
  return ColumnInfo{sql_name(name), ColumnType<T>::sql, meaning, doc};
}

std::vector<TableInfo> declared_tables() {
  std::vector<TableInfo> tables;
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc) \
  tables.push_back(TableInfo{#sql_name, table_role, doc, {}, {}});
#define APPTRACER_COLUMN(name, type, meaning, doc) \
  tables.back().columns.push_back(column_info<type>(#name, meaning, doc));
#include "apptracer/tables.def"

  auto add_index = [&](const char* name, const char* table, const char* columns, bool unique,
                       bool live) {
    for (TableInfo& t : tables) {
      if (t.name == table) t.indexes.push_back(IndexInfo{name, columns, unique, live});
    }
  };
#define APPTRACER_INDEX(name, table, columns) add_index(#name, #table, columns, false, false);
#define APPTRACER_LIVE_INDEX(name, table, columns) add_index(#name, #table, columns, false, true);
#define APPTRACER_UNIQUE_INDEX(name, table, columns) add_index(#name, #table, columns, true, true);
#include "apptracer/tables.def"
  return tables;
}

}  // namespace

const ColumnInfo* TableInfo::column(std::string_view column_name) const {
  for (const ColumnInfo& c : columns) {
    if (c.name == column_name) return &c;
  }
  return nullptr;
}

// Never destroyed (here and below): the tracer finishes its trace from exit
// handlers, after static destructors may have run.
const std::vector<TableInfo>& all_tables() {
  static const auto* tables = new std::vector<TableInfo>(declared_tables());
  return *tables;
}

const std::vector<ViewInfo>& all_views() {
  static const auto* views = new std::vector<ViewInfo>{
#define APPTRACER_VIEW(name, view_role, doc, row_alias, select) \
  ViewInfo{#name, view_role, doc, #row_alias, select},
#include "apptracer/tables.def"
  };
  return *views;
}

const TableInfo* find_table(std::string_view name) {
  for (const TableInfo& table : all_tables()) {
    if (table.name == name) return &table;
  }
  return nullptr;
}

std::vector<const TableInfo*> tables_with_role(TableRole role) {
  std::vector<const TableInfo*> found;
  for (const TableInfo& table : all_tables()) {
    if (table.role == role) found.push_back(&table);
  }
  return found;
}

std::string create_table_sql(const TableInfo& table) {
  std::string sql = "CREATE TABLE " + table.name + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnInfo& c = table.columns[i];
    sql += (i ? ", " : "") + c.name + " " + c.sql_type;
    if (c.meaning.role == ColumnRole::Ref) {
      sql += std::string(" REFERENCES ") + c.meaning.target + "(id)";
    }
  }
  return sql + ");\n";
}

std::string create_indexes_sql(const TableInfo& table, Indexes which) {
  std::string sql;
  for (const IndexInfo& index : table.indexes) {
    if ((which == Indexes::Live && !index.live) || (which == Indexes::AtEnd && index.live)) continue;
    sql += std::string("CREATE ") + (index.unique ? "UNIQUE " : "") + "INDEX " + index.name +
           " ON " + table.name + "(" + index.columns + ");\n";
  }
  return sql;
}

std::string create_view_sql(const ViewInfo& view, bool merged) {
  std::string select = view.select;
  if (merged) select.insert(select.find("SELECT ") + 7, view.row_alias + ".process_id, ");
  return "CREATE VIEW " + view.name + " AS " + select + ";\n";
}

std::string insert_sql(const TableInfo& table) {
  std::string names, params;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    names += (i ? ", " : "") + table.columns[i].name;
    params += i ? ",?" : "?";
  }
  return "INSERT INTO " + table.name + " (" + names + ") VALUES (" + params + ")";
}

}  // namespace apptracer
