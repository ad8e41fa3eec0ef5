// What apptracer itself took of the run, per site (the tracer's `tracer_time`
// rows: about one call in sample_every of each site timed): how often it ran,
// how long each call took, and its share of the run, so a user can tell how
// far tracing moved the program's own times. The sites on the program's
// threads (CUDA callbacks, host and framework allocator hooks, module and op
// ranges) lengthen the program; CUPTI's and the writer's threads run beside
// it on other cores.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/stats/stats_reports.h"
#include "apptracer/saturating.h"

namespace apptracer {

namespace {

struct SiteSums {
  int64_t timed_calls = 0;
  int64_t calls = 0;  // estimated: timed calls times sample_every
  int64_t ns = 0;     // estimated, less a clock read per timed call
};

const char* thread_of(TracerSite site) {
  if (trace::runs_between_calls(site)) return "program, between calls";
  switch (site) {
    case TracerSite::ApiCallback:
    case TracerSite::KernelArguments: return "program, in calls";
    case TracerSite::RecordAppend: return "program, inside the others";
    case TracerSite::ActivityBuffer: return "CUPTI's";
    default: return "writer";
  }
}

}  // namespace

ReportOutput tracer_report(trace::Trace& trace) {
  if (!trace.db().has_table(TracerTimeRow::kTable)) {
    return {{}, "this trace was recorded before apptracer measured its own time (tracer_time)"};
  }
  int64_t clock_ns = trace::clock_read_ns(trace);
  // Limited to steps (--steps, --steady), each stretch counts by the share
  // of it inside its process's window, and the run is the windows.
  const trace::StepWindow* window = trace.window();
  auto inside = [&](const trace::Packed<TracerTimeRow>& row) {
    if (!window) return 1.0;
    std::optional<std::pair<int64_t, int64_t>> span = window->span(row.process);
    return span ? trace::overlap_share(row.start_ns, row.end_ns, span->first, span->second) : 0.0;
  };
  std::map<TracerSite, SiteSums> sums;
  // The run is the tracer's: from its first stretch's start to its last one's end.
  int64_t first = kInt64Max, last = kInt64Min;
  std::map<trace::ProcessId, std::pair<int64_t, int64_t>> windows;
  for (const trace::Packed<TracerTimeRow>& row : trace.rows<TracerTimeRow>()) {
    first = std::min<int64_t>(first, row.start_ns);
    last = std::max<int64_t>(last, row.end_ns);
    double share = inside(row);
    if (share <= 0) continue;
    if (window) windows.emplace(row.process, *window->span(row.process));
    SiteSums& s = sums[row.site];
    int64_t every = std::max<int64_t>(1, row.sample_every);
    s.timed_calls = saturating_add(s.timed_calls, saturating_round(share * static_cast<double>(row.timed_calls)));
    s.calls = saturating_add(s.calls, saturating_round(share * static_cast<double>(row.timed_calls) * static_cast<double>(every)));
    s.ns = saturating_add(s.ns, saturating_round(share * static_cast<double>(trace::estimated_ns(row, clock_ns))));
  }
  int64_t run_ns = elapsed_ns(first, last);
  if (window) {
    run_ns = 0;
    for (const auto& [process, span] : windows) run_ns = saturating_add(run_ns, elapsed_ns(span.first, span.second));
  }
  run_ns = std::max<int64_t>(1, run_ns);
  if (sums.empty()) return {{}, "apptracer timed none of its own work in this trace (tracer_time is empty)"};
  std::vector<std::pair<TracerSite, SiteSums>> ranked(sums.begin(), sums.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  Table table{"tracer",
              {"site", "thread", "calls", "ns_per_call", "total_ns", "run_share", "timed_calls"},
              {}};
  for (const auto& [site, s] : ranked) {
    table.rows.push_back({std::string(to_string(site)), std::string(thread_of(site)), s.calls,
                          s.calls ? Cell(s.ns / s.calls) : Cell(), s.ns,
                          static_cast<double>(s.ns) / static_cast<double>(run_ns), s.timed_calls});
  }
  return {{table}, {}};
}

}  // namespace apptracer
