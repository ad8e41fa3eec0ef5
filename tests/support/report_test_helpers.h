// Reading cells of report tables in tests: by row and column name, with a
// failure message naming the column instead of a variant access error.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <variant>

#include "analyzer/trace/trace.h"
#include "analyzer/table/table.h"

namespace apptracer::testing {

// A stats report (stats_reports.h) of the database as it is now, read
// through a trace model of its own.
template <typename Report>
auto run_report(Report report, Database& db) {
  trace::Trace trace(db);
  return report(trace);
}

inline const Cell& cell(const Table& table, size_t row, const std::string& column) {
  auto found = std::find(table.columns.begin(), table.columns.end(), column);
  EXPECT_NE(found, table.columns.end()) << "no column " << column << " in " << table.name;
  EXPECT_LT(row, table.rows.size()) << table.name;
  static const Cell missing;
  if (found == table.columns.end() || row >= table.rows.size()) return missing;
  return table.rows[row][static_cast<size_t>(found - table.columns.begin())];
}

inline int64_t integer(const Table& table, size_t row, const std::string& column) {
  const Cell& value = cell(table, row, column);
  EXPECT_TRUE(std::holds_alternative<int64_t>(value)) << table.name << "." << column << " row " << row;
  return std::holds_alternative<int64_t>(value) ? std::get<int64_t>(value) : -1;
}

inline double real(const Table& table, size_t row, const std::string& column) {
  const Cell& value = cell(table, row, column);
  EXPECT_TRUE(std::holds_alternative<double>(value)) << table.name << "." << column << " row " << row;
  return std::holds_alternative<double>(value) ? std::get<double>(value) : -1;
}

inline std::string text(const Table& table, size_t row, const std::string& column) {
  const Cell& value = cell(table, row, column);
  EXPECT_TRUE(std::holds_alternative<std::string>(value)) << table.name << "." << column << " row " << row;
  return std::holds_alternative<std::string>(value) ? std::get<std::string>(value) : "";
}

inline bool is_null(const Table& table, size_t row, const std::string& column) {
  return std::holds_alternative<std::monostate>(cell(table, row, column));
}

}  // namespace apptracer::testing
