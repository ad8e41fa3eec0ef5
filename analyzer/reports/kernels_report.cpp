// GPU kernels by demangled name (the mangled name when no demangled one was
// recorded): launches and GPU execution time. Launches whose GPU activity
// record was lost have no duration; they are counted in `untimed` and left out
// of the time columns.
#include <algorithm>
#include <map>

#include "duration_summary.h"
#include "stats_reports.h"

namespace apptracer {

Table kernels_report(Database& db) {
  struct Launches {
    int64_t count = 0;
    std::vector<int64_t> durations;
  };
  // Grouped by interned name id; the text is looked up once per group.
  std::map<int64_t, Launches> by_name_id;
  Statement rows = db.prepare(
      "SELECT COALESCE(demangled_id, name_id, 0), gpu_end_ns - gpu_start_ns FROM kernels");
  while (rows.step()) {
    Launches& launches = by_name_id[rows.int64(0)];
    ++launches.count;
    if (!rows.is_null(1)) launches.durations.push_back(rows.int64(1));
  }
  std::map<std::string, Launches> by_name;
  Statement name = db.prepare("SELECT text FROM strings WHERE id = ?");
  for (auto& [name_id, launches] : by_name_id) {
    name.bind(1, name_id);
    Launches& group = by_name[name.step() ? name.text(0) : "?"];
    name.reset();
    group.count += launches.count;
    group.durations.insert(group.durations.end(), launches.durations.begin(), launches.durations.end());
  }

  struct Summary {
    std::string name;
    int64_t count;
    DurationSummary timed;
  };
  std::vector<Summary> summaries;
  for (auto& [name, launches] : by_name) {
    summaries.push_back({name, launches.count, summarize_durations(launches.durations)});
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const Summary& a, const Summary& b) { return a.timed.total > b.timed.total; });

  Table table{"kernels", {"name", "count"}, {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  table.columns.push_back("untimed");
  for (const Summary& summary : summaries) {
    std::vector<Cell> row{summary.name, summary.count};
    append_duration_cells(row, summary.timed);
    row.emplace_back(summary.count - summary.timed.count);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
