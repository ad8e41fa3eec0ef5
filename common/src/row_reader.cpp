#include "apptracer/row_reader.h"

namespace apptracer::detail {

std::string select_sql(Database& db, const TableInfo& table, std::string_view extra) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const std::string& name = table.columns[i].name;
    if (i) sql += ", ";
    sql += db.has_column(table.name, name) ? "\"" + name + "\"" : "NULL";
  }
  return sql.append(extra) + " FROM " + table.name;
}

}  // namespace apptracer::detail
