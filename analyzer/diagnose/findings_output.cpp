#include "analyzer/diagnose/findings_output.h"

#include <algorithm>

#include "analyzer/table/table_format.h"
#include "analyzer/trace/short_names.h"
#include "apptracer/text_escape.h"
#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/dvdg/labels.h"

namespace apptracer::diagnose {

namespace {

// What makes a finding minor (ranked_findings.cpp, memory_rules.cpp).
constexpr const char* kMinorKinds =
    "saving less per step than steps vary, one-offs, or memory a GPU with room to spare does not need";

std::string joined_rows(const Finding& finding) {
  std::string text;
  for (const Evidence& e : finding.rows)
    text += (text.empty() ? "" : " ") + e.table + ":" + std::to_string(e.row);
  return text;
}

std::string joined_names(const Finding& finding, bool shortened = false) {
  std::string text;
  for (const std::string& name : finding.names)
    text += (text.empty() ? "" : "; ") + (shortened ? trace::short_kernel_name(name) : name);
  return text;
}

std::optional<int64_t> per_step(const Finding& f, std::optional<int64_t> ns) {
  if (!ns || f.steps <= 0) return std::nullopt;
  return *ns / f.steps;
}

// "9.68 ms per step (290.4 ms over 30 steps)", or the total alone.
std::string amount(const Finding& f, int64_t ns) {
  if (f.steps <= 0) return format_ns(ns);
  return format_ns(ns / f.steps) + " per step (" + format_ns(ns) + " over " +
         std::to_string(f.steps) + " steps)";
}

// A details column's unit, from its name as the report reads it: "gpu_ns_each"
// is a time, "bytes" a size.
enum class Unit { None, Time, Bytes };

Unit unit_of(const std::string& column) {
  std::string parts = "_" + column + "_";
  if (parts.find("_ns_") != std::string::npos) return Unit::Time;
  if (parts.find("_bytes_") != std::string::npos) return Unit::Bytes;
  return Unit::None;
}

std::string cell_text(const Cell& cell, Unit unit) {
  if (const auto* v = std::get_if<int64_t>(&cell)) {
    if (unit == Unit::Time) return format_ns(*v);
    return unit == Unit::Bytes ? dvdg::format_bytes(*v) : std::to_string(*v);
  }
  if (const auto* v = std::get_if<std::string>(&cell)) return *v;
  if (const auto* v = std::get_if<double>(&cell)) return std::to_string(*v);
  return "-";
}

constexpr size_t kDetailRowsShown = 3;

// The details table's first rows, one line each, as people read them.
void write_details(std::ostream& out, const Table& details) {
  if (details.rows.empty()) return;
  out << "   " << details.name << ":";
  for (size_t c = 0; c < details.columns.size(); ++c) out << (c ? " | " : " ") << details.columns[c];
  out << "\n";
  for (const std::vector<Cell>& row : details_in_text_form(details, kDetailRowsShown).rows) {
    out << "    ";
    for (size_t c = 0; c < row.size(); ++c)
      out << (c ? " | " : " ") << terminal_text(cell_text(row[c], unit_of(details.columns[c])));
    out << "\n";
  }
}

// The overlapping findings by their number in the list (from 1).
std::vector<size_t> overlap_numbers(const Finding& finding) {
  std::vector<size_t> numbers;
  for (size_t i : finding.overlaps) numbers.push_back(i + 1);
  return numbers;
}

std::string joined_numbers(const std::vector<size_t>& numbers) {
  std::string text;
  for (size_t n : numbers) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return text;
}

}  // namespace

size_t shown_by_default(const std::vector<Finding>& findings) {
  size_t major = static_cast<size_t>(
      std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.minor; }) -
      findings.begin());
  return std::min(kShownFindings, major);
}

nlohmann::json findings_json(const std::vector<Finding>& findings, size_t shown) {
  nlohmann::json list = nlohmann::json::array();
  size_t count = std::min(shown, findings.size());
  for (size_t i = 0; i < count; ++i) {
    const Finding& f = findings[i];
    nlohmann::json rows = nlohmann::json::array();
    for (const Evidence& e : f.rows) rows.push_back({{"table", e.table}, {"id", e.row}});
    list.push_back({{"rule", f.rule},
                    {"what", f.what},
                    {"where",
                     {{"rows", rows},
                      {"names", f.names},
                      {"nvtx_range", f.nvtx},
                      {"call_site", f.call_site},
                      {"framework", f.framework}}},
                    {"cost_ns", f.cost_ns},
                    {"saving_ns", f.saving_ns ? nlohmann::json(*f.saving_ns) : nlohmann::json()},
                    {"saving_bytes", f.saving_bytes ? nlohmann::json(*f.saving_bytes) : nlohmann::json()},
                    {"steps", f.steps},
                    {"saving_per_step_ns", per_step(f, f.saving_ns) ? nlohmann::json(*per_step(f, f.saving_ns)) : nlohmann::json()},
                    {"startup", f.startup},
                    {"minor", f.minor},
                    {"details", f.details.rows.empty() ? nlohmann::json() : table_json(f.details)},
                    {"estimate", f.estimate},
                    {"fix", f.fix},
                    {"correctness", f.correctness},
                    {"occurrences", f.occurrences},
                    {"overlaps", overlap_numbers(f)}});
  }
  return list;
}

Table details_in_text_form(const Table& details, size_t count) {
  Table shortened = details;
  for (const std::string& column : details.columns) {
    set_text_form(shortened, column, [](std::string_view name) { return trace::short_kernel_name(name); });
  }
  bool numbered = false;
  shortened.rows = rows_in_text_form(shortened, std::min(details.rows.size(), count), numbered);
  shortened.text_forms.clear();
  return shortened;
}

nlohmann::json table_json(const Table& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const Cell& cell : row) {
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
              cells.push_back(nullptr);
            } else {
              cells.push_back(v);
            }
          },
          cell);
    }
    rows.push_back(std::move(cells));
  }
  return {{"name", table.name}, {"columns", table.columns}, {"rows", rows}};
}

Table findings_table(const std::vector<Finding>& findings, size_t shown) {
  Table table{"diagnoses",
              {"rule", "what", "names", "nvtx_range", "call_site", "framework", "rows", "cost_ns", "saving_ns",
               "saving_bytes", "estimate", "fix", "occurrences", "overlaps", "steps", "saving_per_step_ns"},
              {}};
  for (size_t i = 0; i < std::min(shown, findings.size()); ++i) {
    const Finding& f = findings[i];
    table.rows.push_back({f.rule, f.what, joined_names(f), f.nvtx, f.call_site, f.framework, joined_rows(f),
                          f.cost_ns, optional_cell(f.saving_ns), optional_cell(f.saving_bytes), f.estimate, f.fix,
                          f.occurrences, joined_numbers(overlap_numbers(f)), f.steps,
                          optional_cell(per_step(f, f.saving_ns))});
  }
  return table;
}

Table left_out_table(const std::vector<Finding>& findings, size_t shown) {
  int64_t count = static_cast<int64_t>(std::min(shown, findings.size()));
  return {"diagnoses_left_out",
          {"shown", "left_out"},
          {{count, static_cast<int64_t>(findings.size()) - count}}};
}

void write_findings_text(std::ostream& out, const std::vector<Finding>& findings,
                         size_t shown, bool rows) {
  if (findings.empty()) {
    out << "no findings: nothing in this trace crossed a rule's threshold\n";
    return;
  }
  size_t count = std::min(shown, findings.size());
  out << findings.size()
      << " finding(s): correctness first, then by estimated saving, then those whose saving is "
         "unknown (by cost), start-up last (then minor ones: "
      << kMinorKinds << ")";
  if (count < findings.size()) out << "; the first " << count << " shown";
  out << "\n";
  for (size_t i = 0; i < count; ++i) {
    const Finding& f = findings[i];
    out << "\n" << i + 1 << ". [" << f.rule << "] " << terminal_text(f.what) << "\n";
    std::string where = joined_names(f, true);
    if (!f.nvtx.empty()) where += (where.empty() ? "" : "; ") + std::string("NVTX ") + f.nvtx;
    if (!f.call_site.empty()) where += (where.empty() ? "" : "; ") + std::string("called by ") + f.call_site;
    if (!f.framework.empty()) where += (where.empty() ? "" : " ") + std::string("in ") + f.framework;
    if (!where.empty()) out << "   where:  " << terminal_text(where) << "\n";
    if (rows && !f.rows.empty()) out << "   rows:   " << joined_rows(f) << "\n";
    out << "   cost:   " << (f.cost_ns > 0 ? amount(f, f.cost_ns) : std::string("-"));
    out << "   saving: ";
    if (f.saving_bytes) {
      out << dvdg::format_bytes(*f.saving_bytes) << " of memory";
    } else {
      out << (f.saving_ns ? amount(f, *f.saving_ns)
                          : std::string(f.correctness ? "- (wrong results)" : "unknown"));
    }
    if (!f.estimate.empty()) out << " (" << terminal_text(f.estimate) << ")";
    if (!f.overlaps.empty()) {
      out << "; overlaps finding(s) " << joined_numbers(overlap_numbers(f))
          << ": do not add their savings";
    }
    out << "\n   fix:    " << terminal_text(f.fix) << "\n";
    write_details(out, f.details);
  }
  if (count < findings.size()) {
    size_t minor = static_cast<size_t>(std::count_if(findings.begin() + static_cast<std::ptrdiff_t>(count),
                                                     findings.end(), [](const Finding& f) { return f.minor; }));
    out << "\n" << findings.size() - count << " more finding(s) with smaller savings left out";
    if (minor > 0) out << " (" << minor << " minor: " << kMinorKinds << ")";
    out << ": --all shows every finding\n";
  }
}

}  // namespace apptracer::diagnose
