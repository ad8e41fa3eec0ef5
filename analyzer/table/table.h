// A result table: what every stats report and every query produces, and what
// every output format (table, CSV, JSON) prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace apptracer {

// One value: SQL NULL, an integer, a real or text.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

// An integer cell, NULL when absent.
inline Cell optional_cell(const std::optional<int64_t>& value) {
  Cell cell;
  if (value) cell = *value;
  return cell;
}

// Receives a table row by row (a query's rows, streamed as they come).
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void columns(const std::vector<std::string>& names) = 0;
  virtual void row(std::vector<Cell> cells) = 0;
};

struct Table {
  std::string name;  // report name: the JSON key and CSV heading; empty for a query
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  // In the table format, at most this many rows (its first: a table
  // ordered largest first), then a line counting the rest; 0: every row.
  // CSV and JSON, which programs read, have every row.
  size_t text_rows = 0;
};

}  // namespace apptracer
