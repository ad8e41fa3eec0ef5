// One line per process: what it is and how much it did. For a trace of one
// process it heads the report; for a merged trace it compares the processes
// (forked children, ranks of a job) side by side.
#include <map>

#include "analyzer/trace/trace.h"

#include "stats_reports.h"
#include "sums.h"

namespace apptracer {

namespace {

// Per process, the `width` sums a `SELECT process, sum, ... GROUP BY 1` gives.
struct ProcessSums {
  size_t width;
  std::map<int64_t, std::vector<int64_t>> sums;

  ProcessSums(Database& db, const std::string& sql, size_t values) : width(values) {
    Statement rows = db.prepare(sql);
    while (rows.step()) {
      std::vector<int64_t>& row = sums[rows.int64(0)];
      for (size_t i = 0; i < width; ++i) {
        row.push_back(rows.optional_int64(static_cast<int>(i) + 1).value_or(0));
      }
    }
  }

  void append_to(std::vector<Cell>& row, int64_t process_id) const {
    auto found = sums.find(process_id);
    for (size_t i = 0; i < width; ++i) {
      row.emplace_back(found == sums.end() ? int64_t{0} : found->second[i]);
    }
  }
};

}  // namespace

Table processes_report(Database& db) {
  trace::TraceProcesses processes = trace::Trace(db).processes();
  std::string select = std::string("SELECT ") + (processes.merged ? "process_id" : "1") + ", ";
  std::vector<ProcessSums> columns;
  columns.emplace_back(
      db, select + "count(*), " + saturating_sum_sql("end_ns - start_ns") + " FROM api_calls GROUP BY 1",
      2);
  columns.emplace_back(db,
                       select + "count(*), " + saturating_sum_sql("gpu_end_ns - gpu_start_ns") +
                           " FROM kernels GROUP BY 1",
                       2);
  columns.emplace_back(
      db, select + "count(*), " + saturating_sum_sql("bytes") + " FROM memcpys GROUP BY 1", 2);
  columns.emplace_back(
      db, select + saturating_sum_sql("end_ns - start_ns") + " FROM syncs GROUP BY 1", 1);

  Table table{"processes",
              {"process_id", "pid", "program", "status", "api_calls", "api_ns", "kernels",
               "kernel_ns", "copies", "copy_bytes", "sync_ns"},
              {}};
  for (const trace::TraceProcess& process : processes.list) {
    std::vector<Cell> row{process.process_id, process.pid, process.name, process.status};
    for (const ProcessSums& sums : columns) sums.append_to(row, process.process_id);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
