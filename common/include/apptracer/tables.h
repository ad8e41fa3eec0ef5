// The trace tables as C++: a row struct per table (fields named and typed as
// the columns are), a way to visit a row's columns in order, and metadata
// (names, SQL types, roles, docs) for everything that works on tables
// generically. All of it is generated from tables.def.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "apptracer/column_types.h"

namespace apptracer {

// Who writes a table.
enum class TableRole : uint8_t {
  Meta,      // the trace's description of itself (meta, strings, enum_values, schema_*)
  Trace,     // recorded per process by the tracer; merge remaps and concatenates these
  Analysis,  // written into a trace by the analyzer (dvdg)
  Merge,     // written by `apptracer merge`
};
std::string_view to_string(TableRole role);

// --- row structs ------------------------------------------------------------------

// `Table` names the generated type itself, also in types derived from it.
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc) \
  struct RowType {                                         \
    using Table = RowType;                                 \
    static constexpr const char* kTable = #sql_name;
#define APPTRACER_COLUMN(name, type, meaning, doc) type name{};
#define APPTRACER_END_TABLE() \
  }                           \
  ;
#include "apptracer/tables.def"

// for_each_column(row, f): f(value) for each column, in declaration order;
// on a non-const row, f may assign (row_reader.h fills rows this way).
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc)                           \
  template <typename R, typename F>                                                  \
  std::enable_if_t<std::is_same_v<std::remove_const_t<R>, RowType>> for_each_column( \
      R& row, F&& f) {
#define APPTRACER_COLUMN(name, type, meaning, doc) f(row.name);
#define APPTRACER_END_TABLE() }
#include "apptracer/tables.def"

// --- metadata ---------------------------------------------------------------------

struct ColumnInfo {
  std::string name;  // as in SQL
  std::string sql_type;
  ColumnMeaning meaning;  // Enum columns carry their enum's name as target
  std::string doc;
};

struct IndexInfo {
  std::string name;
  std::string columns;
  bool unique = false;
  bool live = false;  // kept while recording rather than built at the end
};

struct TableInfo {
  std::string name;
  TableRole role;
  std::string doc;
  std::vector<ColumnInfo> columns;
  std::vector<IndexInfo> indexes;

  const ColumnInfo* column(std::string_view column_name) const;
};

struct ViewInfo {
  std::string name;
  TableRole role;  // Trace: every trace has it; Analysis: made with the tables it shows
  std::string doc;
  std::string row_alias;  // the table alias whose rows the view's rows are
  std::string select;
};

// Every table in declaration order (a table's references come before it,
// except ones it makes to itself).
const std::vector<TableInfo>& all_tables();
const std::vector<ViewInfo>& all_views();
// nullptr for a name that is not a declared table.
const TableInfo* find_table(std::string_view name);
// The declared tables with this role.
std::vector<const TableInfo*> tables_with_role(TableRole role);

// SQL: the table (no indexes), its indexes (those kept live, those built at
// the end, or all), an INSERT of every column with one `?` each in
// declaration order.
enum class Indexes { Live, AtEnd, All };
std::string create_table_sql(const TableInfo& table);
std::string create_indexes_sql(const TableInfo& table, Indexes which = Indexes::All);
// `merged`: the view also shows its rows' process_id (merge adds that column).
std::string create_view_sql(const ViewInfo& view, bool merged = false);
std::string insert_sql(const TableInfo& table);

template <typename Row>
const TableInfo& table_of() {
  static const TableInfo* table = find_table(Row::kTable);
  return *table;
}

}  // namespace apptracer
