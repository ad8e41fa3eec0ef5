#include "table_format.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace apptracer {

namespace {

// People read three decimals; trailing zeros say nothing.
std::string human_real(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

std::string human_text(const Cell& cell) {
  if (std::holds_alternative<int64_t>(cell)) return std::to_string(std::get<int64_t>(cell));
  if (std::holds_alternative<double>(cell)) return human_real(std::get<double>(cell));
  if (std::holds_alternative<std::string>(cell)) return std::get<std::string>(cell);
  return "";
}

bool is_number(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

nlohmann::json json_value(const Cell& cell) {
  if (std::holds_alternative<int64_t>(cell)) return std::get<int64_t>(cell);
  if (std::holds_alternative<double>(cell)) return std::get<double>(cell);
  if (std::holds_alternative<std::string>(cell)) return std::get<std::string>(cell);
  return nullptr;
}

void write_text(std::ostream& out, const Table& table) {
  std::vector<size_t> widths;
  for (const std::string& column : table.columns) widths.push_back(column.size());
  std::vector<std::vector<std::string>> texts;
  for (const auto& row : table.rows) {
    texts.emplace_back();
    for (size_t i = 0; i < row.size(); ++i) {
      texts.back().push_back(human_text(row[i]));
      widths[i] = std::max(widths[i], texts.back().back().size());
    }
  }
  // Numeric columns are right-aligned, like every profiler's tables.
  std::vector<bool> numeric(table.columns.size(), false);
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) numeric[i] = numeric[i] || is_number(row[i]);
  }
  auto write_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string pad(widths[i] - cells[i].size(), ' ');
      if (i > 0) line += "  ";
      line += numeric[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
    }
    out << line << '\n';
  };
  write_line(table.columns);
  std::vector<std::string> rules;
  for (size_t width : widths) rules.emplace_back(width, '-');
  write_line(rules);
  for (const auto& row : texts) write_line(row);
  if (table.rows.empty()) out << "(no rows)\n";
}

std::string csv_field(const Cell& cell) {
  if (std::holds_alternative<double>(cell)) return json_value(cell).dump();
  std::string text = human_text(cell);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_csv(std::ostream& out, const Table& table) {
  auto write_line = [&](const std::vector<Cell>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_field(cells[i]);
    out << "\r\n";
  };
  write_line(std::vector<Cell>(table.columns.begin(), table.columns.end()));
  for (const auto& row : table.rows) write_line(row);
}

nlohmann::json json_rows(const Table& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (size_t i = 0; i < row.size(); ++i) object[table.columns[i]] = json_value(row[i]);
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace

OutputFormat parse_output_format(const std::string& name) {
  if (name == "table") return OutputFormat::Table;
  if (name == "csv") return OutputFormat::Csv;
  if (name == "json") return OutputFormat::Json;
  throw std::invalid_argument("unknown output format '" + name + "' (use table, csv or json)");
}

void write_tables(std::ostream& out, const std::vector<Table>& tables, OutputFormat format) {
  if (format == OutputFormat::Json) {
    nlohmann::json document;
    if (tables.size() == 1 && tables.front().name.empty()) {
      document = json_rows(tables.front());
    } else {
      document = nlohmann::json::object();
      for (const Table& table : tables) document[table.name] = json_rows(table);
    }
    // Invalid UTF-8 in a trace string must not abort the whole output.
    out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  bool headings = tables.size() > 1;
  for (size_t i = 0; i < tables.size(); ++i) {
    if (format == OutputFormat::Csv) {
      if (i > 0) out << "\r\n";
      if (headings) out << "# " << tables[i].name << "\r\n";
      write_csv(out, tables[i]);
    } else {
      if (i > 0) out << '\n';
      if (headings || !tables[i].name.empty()) out << "== " << tables[i].name << " ==\n";
      write_text(out, tables[i]);
    }
  }
}

}  // namespace apptracer
