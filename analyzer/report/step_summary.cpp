#include "analyzer/report/step_summary.h"

#include <map>
#include <vector>

#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer::report {

namespace {

using nlohmann::json;

int64_t integer(const Cell& cell) {
  if (const auto* v = std::get_if<int64_t>(&cell)) return *v;
  if (const auto* v = std::get_if<double>(&cell)) return static_cast<int64_t>(*v);
  return 0;
}

size_t column(const Table& table, const std::string& name) {
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (table.columns[c] == name) return c;
  }
  throw std::logic_error("table " + table.name + " lacks column " + name);
}

const Table& table_named(const std::vector<Table>& tables, const std::string& name) {
  for (const Table& table : tables) {
    if (table.name == name) return table;
  }
  throw std::logic_error("stats --report steps lacks table " + name);
}

double median(std::vector<int64_t> values) { return summarize_durations(std::move(values)).median; }

json whole_run(const diagnose::TraceFacts& facts, const std::string& why) {
  json devices = json::array();
  for (const auto& [device, busy] : facts.busy_by_device()) {
    int64_t busy_ns = diagnose::covered_ns(busy, INT64_MIN, INT64_MAX);
    devices.push_back({{"device", device},
                       {"busy_ns", busy_ns},
                       {"busy_pct", facts.span_ns() > 0 ? 100.0 * busy_ns / facts.span_ns() : 0.0}});
  }
  return {{"found", false},
          {"why", why},
          {"span_ns", facts.span_ns()},
          {"devices", devices},
          {"launches", facts.ops().kernels().size()},
          {"copies", facts.ops().copies().size()},
          {"memsets", facts.ops().memsets().size()}};
}

}  // namespace

json step_summary(trace::Trace& trace, const diagnose::TraceFacts& facts) {
  ReportOutput steps = steps_report(trace);
  if (steps.tables.empty()) return whole_run(facts, steps.note);
  const Table& per_step = table_named(steps.tables, "steps");
  const Table& summary = table_named(steps.tables, "step_summary");
  // The steady steps' numbers, by process.
  struct Columns {
    std::vector<int64_t> launches, copies, memsets, host_gap;
  };
  std::map<int64_t, Columns> by_process;
  size_t process = column(per_step, "process"), phase = column(per_step, "phase");
  for (const auto& row : per_step.rows) {
    if (std::get<std::string>(row[phase]) != "step") continue;
    Columns& columns = by_process[integer(row[process])];
    columns.launches.push_back(integer(row[column(per_step, "launches")]));
    columns.copies.push_back(integer(row[column(per_step, "copies")]));
    columns.memsets.push_back(integer(row[column(per_step, "memsets")]));
    columns.host_gap.push_back(integer(row[column(per_step, "host_gap_ns")]));
  }
  json processes = json::array();
  for (const auto& row : summary.rows) {
    int64_t id = integer(row[column(summary, "process")]);
    int64_t wall = integer(row[column(summary, "median_wall_ns")]);
    int64_t busy = integer(row[column(summary, "median_gpu_busy_ns")]);
    Columns& columns = by_process[id];
    processes.push_back({{"pid", trace.process(id).pid},
                         {"steps", integer(row[column(summary, "steps")])},
                         {"steady_steps", integer(row[column(summary, "steady_steps")])},
                         {"startup_ns", integer(row[column(summary, "startup_ns")])},
                         {"median_wall_ns", wall},
                         {"median_gpu_busy_ns", busy},
                         {"gpu_busy_pct", wall > 0 ? 100.0 * busy / wall : 0.0},
                         {"launches", median(columns.launches)},
                         {"copies", median(columns.copies)},
                         {"memsets", median(columns.memsets)},
                         {"host_gap_ns", median(columns.host_gap)},
                         {"found_from", std::get<std::string>(row[column(summary, "found_from")])}});
  }
  return {{"found", true}, {"processes", processes}};
}

}  // namespace apptracer::report
