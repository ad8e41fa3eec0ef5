#include "analyzer/table/table_format.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apptracer/text_escape.h"

namespace apptracer {

namespace {

// A C++ template kernel's name runs to thousands of characters: in aligned
// text a cell keeps its start, enough to tell it (CSV and JSON keep it whole).
constexpr size_t kMaxTextCell = 100;
std::string shortened(std::string text) {
  if (text.size() > kMaxTextCell) text = text.substr(0, kMaxTextCell - 3) + "...";
  return text;
}

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

nlohmann::ordered_json json_value(const Cell& cell) {
  if (std::holds_alternative<int64_t>(cell)) return std::get<int64_t>(cell);
  if (std::holds_alternative<double>(cell)) return std::get<double>(cell);
  if (std::holds_alternative<std::string>(cell)) return std::get<std::string>(cell);
  return nullptr;
}

std::string csv_field(const Cell& cell) {
  if (std::holds_alternative<double>(cell)) return json_value(cell).dump();
  std::string text = human_text(cell);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_csv_line(std::ostream& out, const std::vector<Cell>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_field(cells[i]);
  out << "\r\n";
}

// A row's object keeps the table's column order, as its text and CSV do
// (a DataFrame made from the rows has the columns in that order).
nlohmann::ordered_json json_row(const std::vector<std::string>& columns, const std::vector<Cell>& row) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (size_t i = 0; i < row.size() && i < columns.size(); ++i) object[columns[i]] = json_value(row[i]);
  return object;
}

nlohmann::ordered_json json_rows(const Table& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) rows.push_back(json_row(table.columns, row));
  return rows;
}

std::string json_text(const nlohmann::ordered_json& value) {
  // Invalid UTF-8 in a trace string must not abort the whole output.
  return value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

OutputFormat parse_output_format(const std::string& name) {
  if (name == "table") return OutputFormat::Table;
  if (name == "csv") return OutputFormat::Csv;
  if (name == "json") return OutputFormat::Json;
  throw std::invalid_argument("unknown output format '" + name + "' (use table, csv or json)");
}

void write_tables(std::ostream& out, const std::vector<Table>& tables, OutputFormat format) {
  bool bare_array = tables.size() == 1 && tables.front().name.empty();
  if (format == OutputFormat::Json && !bare_array) {
    nlohmann::ordered_json document = nlohmann::ordered_json::object();
    for (const Table& table : tables) document[table.name] = json_rows(table);
    out << json_text(document) << '\n';
    return;
  }
  bool headings = tables.size() > 1;
  for (size_t i = 0; i < tables.size(); ++i) {
    std::string heading = tables[i].name;
    if (format == OutputFormat::Csv) {
      if (i > 0) out << "\r\n";
      if (!headings) heading.clear();
    } else if (i > 0) {
      out << '\n';
    }
    const Table& table = tables[i];
    size_t shown = table.rows.size();
    if (format == OutputFormat::Table && table.text_rows > 0) shown = std::min(shown, table.text_rows);
    TableStream stream(out, format, heading);
    stream.columns(table.columns);
    bool numbered = false;
    if (format == OutputFormat::Table && !table.text_forms.empty()) {
      for (const std::vector<Cell>& row : rows_in_text_form(table, shown, numbered)) stream.row(row);
    } else {
      for (size_t r = 0; r < shown; ++r) stream.row(table.rows[r]);
    }
    stream.finish();
    if (shown < table.rows.size()) {
      out << "(" << table.rows.size() - shown << " more rows; --format csv or json lists every one)\n";
    }
    if (numbered) out << "(names numbered [1], [2] shorten alike; --format csv or json gives them whole)\n";
  }
}

std::vector<std::vector<Cell>> rows_in_text_form(const Table& table, size_t count, bool& numbered) {
  std::vector<std::vector<Cell>> shown(table.rows.begin(), table.rows.begin() + count);
  for (size_t column = 0; column < table.text_forms.size(); ++column) {
    if (!table.text_forms[column]) continue;
    // Each text form's whole cells, in the order of their first row.
    std::map<std::string, std::vector<std::string>> wholes;
    for (std::vector<Cell>& row : shown) {
      if (column >= row.size() || !std::holds_alternative<std::string>(row[column])) continue;
      const std::string& whole = std::get<std::string>(row[column]);
      std::string form = table.text_forms[column](whole);
      std::vector<std::string>& alike = wholes[form];
      if (std::find(alike.begin(), alike.end(), whole) == alike.end()) alike.push_back(whole);
      row[column] = form;
    }
    for (size_t r = 0; r < shown.size(); ++r) {
      std::vector<Cell>& row = shown[r];
      if (column >= row.size() || !std::holds_alternative<std::string>(row[column])) continue;
      const std::vector<std::string>& alike = wholes[std::get<std::string>(row[column])];
      if (alike.size() < 2) continue;
      const std::string& whole = std::get<std::string>(table.rows[r][column]);
      size_t number = std::find(alike.begin(), alike.end(), whole) - alike.begin() + 1;
      row[column] = std::get<std::string>(row[column]) + " [" + std::to_string(number) + "]";
      numbered = true;
    }
  }
  return shown;
}

TableStream::TableStream(std::ostream& out, OutputFormat format, std::string name)
    : out_(out), format_(format), name_(std::move(name)) {}

void TableStream::columns(const std::vector<std::string>& names) {
  columns_ = names;
  if (format_ == OutputFormat::Csv) {
    if (!name_.empty()) out_ << "# " << name_ << "\r\n";
    write_csv_line(out_, std::vector<Cell>(columns_.begin(), columns_.end()));
  } else if (format_ == OutputFormat::Table) {
    if (!name_.empty()) out_ << "== " << terminal_text(name_) << " ==\n";
    for (std::string& column : columns_) {
      column = terminal_text(column);
      widths_.push_back(column.size());
    }
    numeric_.assign(columns_.size(), false);
  }
}

void TableStream::row(std::vector<Cell> cells) {
  cells.resize(columns_.size());
  switch (format_) {
    case OutputFormat::Csv: write_csv_line(out_, cells); break;
    case OutputFormat::Json: {
      // Each row as the two-space-indented array write_tables would print.
      std::string object = json_text(json_row(columns_, cells));
      std::string indented = "  ";
      for (char c : object) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
      out_ << (rows_ == 0 ? "[\n" : ",\n") << indented;
      break;
    }
    case OutputFormat::Table: {
      std::vector<std::string> texts;
      for (size_t i = 0; i < cells.size(); ++i) {
        texts.push_back(shortened(terminal_text(human_text(cells[i]))));
        numeric_[i] = numeric_[i] || is_number(cells[i]);
      }
      block_.push_back(std::move(texts));
      if (block_.size() == kTextBlockRows) write_text_block();
      break;
    }
  }
  ++rows_;
}

void TableStream::write_text_block() {
  for (const auto& texts : block_) {
    for (size_t i = 0; i < texts.size(); ++i) widths_[i] = std::max(widths_[i], texts[i].size());
  }
  // Numeric columns are right-aligned, like every profiler's tables.
  auto write_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string pad(widths_[i] - cells[i].size(), ' ');
      if (i > 0) line += "  ";
      line += numeric_[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
    }
    out_ << line << '\n';
  };
  if (!header_written_) {
    write_line(columns_);
    std::vector<std::string> rules;
    for (size_t width : widths_) rules.emplace_back(width, '-');
    write_line(rules);
    header_written_ = true;
  }
  for (const auto& texts : block_) write_line(texts);
  block_.clear();
}

void TableStream::finish() {
  switch (format_) {
    case OutputFormat::Csv: break;
    case OutputFormat::Json: out_ << (rows_ == 0 ? "[]\n" : "\n]\n"); break;
    case OutputFormat::Table:
      write_text_block();
      if (rows_ == 0) out_ << "(no rows)\n";
      break;
  }
}

}  // namespace apptracer
