// `apptracer schema`: the trace schema this analyzer reads and writes, as
// JSON — every table and view with its columns (SQL type, role, target, doc)
// and every enum with its values — straight from tables.def and enums.h.
// Clients (the Python package) decode traces from it instead of copying the
// schema, including traces too old to describe themselves (schema 2 has no
// schema_columns).
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "apptracer/enums.h"
#include "apptracer/schema.h"
#include "apptracer/tables.h"
#include "commands.h"

namespace apptracer {

namespace {

nlohmann::ordered_json schema_json() {
  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["oldest_readable_schema_version"] = kOldestReadableSchemaVersion;
  auto& tables = out["tables"] = nlohmann::ordered_json::object();
  for (const TableInfo& table : all_tables()) {
    nlohmann::ordered_json columns = nlohmann::ordered_json::array();
    for (const ColumnInfo& column : table.columns) {
      columns.push_back({{"name", column.name},
                         {"type", column.sql_type},
                         {"role", std::string(to_string(column.meaning.role))},
                         {"target", column.meaning.target ? nlohmann::ordered_json(column.meaning.target)
                                                          : nlohmann::ordered_json(nullptr)},
                         {"doc", column.doc}});
    }
    tables[table.name] = {{"role", std::string(to_string(table.role))},
                          {"doc", table.doc},
                          {"columns", columns}};
  }
  auto& views = out["views"] = nlohmann::ordered_json::object();
  for (const ViewInfo& view : all_views()) views[view.name] = {{"doc", view.doc}};
  auto& enums = out["enums"] = nlohmann::ordered_json::object();
  for (const EnumValue& value : all_enum_values()) {
    enums[value.enum_name][std::to_string(value.value)] = value.name;
  }
  return out;
}

}  // namespace

void add_schema_command(CLI::App& app, CommandResult& result) {
  app.add_subcommand("schema",
                     "Print the trace schema (tables, columns with their roles, enums) as JSON")
      ->callback([&result] {
        result = [] {
          std::cout << schema_json().dump(1) << '\n';
          return 0;
        };
      });
}

}  // namespace apptracer
