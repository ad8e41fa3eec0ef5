#include "analyzer/report/changed_rows.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace apptracer::report {

namespace {

std::optional<double> number(const Cell& cell) {
  if (const auto* v = std::get_if<int64_t>(&cell)) return static_cast<double>(*v);
  if (const auto* v = std::get_if<double>(&cell)) return *v;
  return std::nullopt;
}

std::optional<size_t> find_column(const Table& table, const std::string& name) {
  auto found = std::find(table.columns.begin(), table.columns.end(), name);
  if (found == table.columns.end()) return std::nullopt;
  return static_cast<size_t>(found - table.columns.begin());
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

bool measure_moved(const std::string& measure, const Cell& a, const Cell& b) {
  std::optional<double> x = number(a), y = number(b);
  if (!x && !y) return false;
  if (!x || !y) return true;  // measured on one side only
  double moved = std::fabs(*y - *x);
  if (ends_with(measure, "_ns") && moved < static_cast<double>(kTimeFloorNs)) return false;
  return moved > kChangeThreshold * std::max(std::fabs(*x), std::fabs(*y));
}

}  // namespace

bool changed_beyond_threshold(const Table& table, const std::vector<Cell>& row) {
  std::optional<size_t> change = find_column(table, "change");
  if (!change) return true;
  const auto* what = std::get_if<std::string>(&row[*change]);
  if (!what || *what == "same") return false;
  if (*what != "changed") return true;  // appeared, disappeared, path changed
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    if (!ends_with(name, "_diff")) continue;
    std::string measure = name.substr(0, name.size() - 5);
    std::optional<size_t> a = find_column(table, measure + "_a"), b = find_column(table, measure + "_b");
    if (a && b && measure_moved(measure, row[*a], row[*b])) return true;
  }
  return false;
}

}  // namespace apptracer::report
