#include "analyzer/whatif/whatif_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analyzer/table/table_format.h"
#include "apptracer/text_escape.h"

namespace apptracer::whatif {

namespace {

Cell ms(int64_t ns) { return Cell(static_cast<double>(ns) / 1e6); }

Cell ratio(int64_t a, int64_t b) { return b == 0 ? Cell() : Cell(static_cast<double>(a) / static_cast<double>(b)); }

// Copies by their path (or kind); kernels' traffic by its path and kind.
std::string transfer_label(const TransferSummary& t) {
  if (t.kernel_traffic) return t.path + " (" + t.kind + (t.bytes_bound ? ", bytes a bound)" : ")");
  return t.path.empty() ? t.kind : t.path;
}

Table time_table(const WhatifResult& r) {
  Table table{"time", {"phase", "count", "recorded (ms)", "baseline (ms)", "what-if (ms)", "what-if / recorded"}, {}};
  table.rows.push_back({std::string("total"), Cell(int64_t{1}), ms(r.recorded_ns), ms(r.baseline_ns),
                        ms(r.predicted_ns), ratio(r.predicted_ns, r.recorded_ns)});
  for (const Phase& phase : r.phases) {
    std::string name = phase.detail.empty() ? phase.name : phase.name + " (" + phase.detail + ")";
    table.rows.push_back({name, Cell(phase.count), ms(phase.ns[0]), ms(phase.ns[1]), ms(phase.ns[2]),
                          ratio(phase.ns[2], phase.ns[0])});
  }
  return table;
}

Table transfer_table(const WhatifResult& r) {
  Table table{"transfers",
              {"path", "copies", "MiB", "recorded (ms)", "baseline (ms)", "what-if (ms)", "what-if path",
               "priced by"},
              {}};
  for (const TransferSummary& t : r.transfers) {
    table.rows.push_back({transfer_label(t), Cell(t.copies),
                          Cell(static_cast<double>(t.bytes) / (1 << 20)), ms(t.recorded_ns), ms(t.baseline_ns),
                          ms(t.predicted_ns), t.whatif_path, t.whatif_by.empty() ? "(recorded)" : t.whatif_by});
  }
  return table;
}

Table critical_table(const WhatifResult& r) {
  Table table{"critical_path", {"on the critical path", "steps", "own (ms)", "waiting (ms)"}, {}};
  for (const CriticalPath::Share& share : r.critical_path.by_kind) {
    table.rows.push_back({share.kind, Cell(share.steps), ms(share.own_ns), ms(share.wait_ns)});
  }
  return table;
}

Table longest_steps(const WhatifResult& r, size_t count) {
  std::vector<const PathStep*> steps;
  for (const PathStep& step : r.critical_path.steps) steps.push_back(&step);
  std::stable_sort(steps.begin(), steps.end(),
                   [](const PathStep* a, const PathStep* b) { return a->own_ns > b->own_ns; });
  if (steps.size() > count) steps.resize(count);
  Table table{"longest_steps", {"kind", "name", "own (ms)", "waited (ms)", "held by", "row"}, {}};
  for (const PathStep* step : steps) {
    table.rows.push_back({step->kind, step->name, ms(step->own_ns), ms(step->wait_ns), to_string(step->bound_by),
                          step->source_table + " " + std::to_string(step->source_id)});
  }
  return table;
}

}  // namespace

void write_whatif_text(std::ostream& out, const WhatifResult& r, size_t steps) {
  out << "trace:    " << r.trace << ", recorded on " << terminal_text(r.recorded_on) << "\n";
  out << "baseline: the trace replayed on " << r.system << "\n";
  if (!r.system2.empty()) out << "machine:  " << r.system2 << "\n";
  std::string changes;
  for (const std::string& change : r.changes) changes += (changes.empty() ? "" : " ") + change;
  out << "what-if:  " << (changes.empty() ? "no changes (= baseline)" : changes) << "\n\n";
  write_tables(out, {time_table(r)}, OutputFormat::Table);
  out << "\ntransfers: sums of their durations (kernels' loads and stores over a path: recorded, the kernels'; "
         "baseline and what-if, the bytes at the path's bandwidth)\n";
  write_tables(out, {transfer_table(r)}, OutputFormat::Table);
  out << "\ncritical path of the what-if: " << static_cast<double>(r.predicted_ns) / 1e6 << " ms in "
      << r.critical_path.steps.size()
      << " steps (waiting: for a call, host time since the previous call; for GPU work, launch latency "
         "and gaps)\n";
  write_tables(out, {critical_table(r)}, OutputFormat::Table);
  out << "\n";
  write_tables(out, {longest_steps(r, steps)}, OutputFormat::Table);
  for (const std::string& note : r.notes) out << "note: " << terminal_text(note) << "\n";
}

std::vector<Table> whatif_tables(const WhatifResult& r, size_t steps) {
  return {time_table(r), transfer_table(r), critical_table(r), longest_steps(r, steps)};
}

std::string whatif_json(const WhatifResult& r, size_t max_steps) {
  using nlohmann::json;
  json phases = json::array();
  for (const Phase& p : r.phases) {
    phases.push_back({{"name", p.name},
                      {"kind", p.kind},
                      {"detail", p.detail},
                      {"count", p.count},
                      {"recorded_ns", p.ns[0]},
                      {"baseline_ns", p.ns[1]},
                      {"predicted_ns", p.ns[2]}});
  }
  json transfers = json::array();
  for (const TransferSummary& t : r.transfers) {
    transfers.push_back({{"path", t.path},
                         {"kind", t.kind},
                         {"kernel_traffic", t.kernel_traffic},
                         {"bytes_bound", t.bytes_bound},
                         {"baseline_by", t.baseline_by},
                         {"whatif_path", t.whatif_path},
                         {"whatif_by", t.whatif_by},
                         {"copies", t.copies},
                         {"bytes", t.bytes},
                         {"recorded_ns", t.recorded_ns},
                         {"baseline_ns", t.baseline_ns},
                         {"predicted_ns", t.predicted_ns}});
  }
  json by_kind = json::array();
  for (const CriticalPath::Share& s : r.critical_path.by_kind) {
    by_kind.push_back({{"kind", s.kind}, {"steps", s.steps}, {"own_ns", s.own_ns}, {"wait_ns", s.wait_ns}});
  }
  json steps = json::array();
  for (size_t i = 0; i < r.critical_path.steps.size() && i < max_steps; ++i) {
    const PathStep& s = r.critical_path.steps[i];
    steps.push_back({{"kind", s.kind},
                     {"source_table", s.source_table},
                     {"source_id", s.source_id},
                     {"name", s.name},
                     {"device", s.device ? json(*s.device) : json()},
                     {"stream", s.stream ? json(*s.stream) : json()},
                     {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns},
                     {"wait_ns", s.wait_ns},
                     {"own_ns", s.own_ns},
                     {"bound_by", to_string(s.bound_by)}});
  }
  size_t left_out = r.critical_path.steps.size() - steps.size();
  json out = {{"trace", r.trace},
              {"recorded_on", r.recorded_on},
              {"system", r.system},
              {"system2", r.system2.empty() ? json() : json(r.system2)},
              {"changes", r.changes},
              {"recorded_ns", r.recorded_ns},
              {"baseline_ns", r.baseline_ns},
              {"predicted_ns", r.predicted_ns},
              {"phases", phases},
              {"transfers", transfers},
              {"critical_path", {{"by_kind", by_kind}, {"steps", steps}, {"steps_left_out", left_out}}},
              {"notes", r.notes}};
  return out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace apptracer::whatif
