#include "apptracer/row_reader.h"

#include <algorithm>

namespace apptracer::detail {

std::string select_sql(Database& db, const TableInfo& table, std::string_view extra,
                       const ColumnNames& wanted) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const std::string& name = table.columns[i].name;
    bool read = wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
    if (i) sql += ", ";
    sql += read && db.has_column(table.name, name) ? "\"" + name + "\"" : "NULL";
  }
  return sql.append(extra) + " FROM " + table.name;
}

}  // namespace apptracer::detail
