// A result table: what every stats report and every query produces, and what
// every output format (table, CSV, JSON) prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  // In the table format, how a column's text is shown where its whole text
  // hides what tells its cells apart (a kernel's C++ name, whose first 100
  // characters many kernels share: its short form); CSV and JSON keep every
  // cell whole. By column; missing or nullptr: as it is.
  std::vector<std::string (*)(std::string_view)> text_forms = {};
};

// Shows the column named `column` through `form` in the table format.
inline void set_text_form(Table& table, std::string_view column, std::string (*form)(std::string_view)) {
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i] != column) continue;
    if (table.text_forms.size() <= i) table.text_forms.resize(i + 1, nullptr);
    table.text_forms[i] = form;
  }
}

}  // namespace apptracer
