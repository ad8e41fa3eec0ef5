// GPU kernels by demangled name (the mangled name when no demangled one was
// recorded): launches and GPU execution time. Launches whose GPU activity
// record was lost have no duration; they are counted in `untimed` and left out
// of the time columns.
#include <algorithm>
#include <map>

#include "analyzer/trace/operations.h"
#include "analyzer/trace/short_names.h"
#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

Table kernels_report(trace::Trace& trace) {
  struct Launches {
    int64_t count = 0;
    std::vector<int64_t> durations;
  };
  // Grouped by interned name id; the text is looked up once per group.
  std::map<int64_t, Launches> by_name_id;
  for (const trace::Kernel& launch : trace.operations().kernels()) {
    const auto& kernel = *launch.row;
    Launches& launches = by_name_id[kernel_name_id(kernel)];
    ++launches.count;
    if (auto duration = recorded_ns(kernel.gpu_start_ns, kernel.gpu_end_ns)) {
      launches.durations.push_back(*duration);
    }
  }
  std::map<std::string, Launches> by_name;
  for (auto& [name_id, launches] : by_name_id) {
    Launches& group = by_name[std::string(trace.string(name_id, "?"))];
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
  set_text_form(table, "name", trace::short_kernel_name_cell);
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
