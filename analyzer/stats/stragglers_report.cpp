// Cross-rank stragglers (analyzer/ranks/stragglers.h) as a stats report: one
// row per joined collective whose last rank arrived at least 100 µs after
// the one before it, the most costly to the job first. Times count from the
// trace's start.
#include "analyzer/ranks/stragglers.h"
#include "analyzer/stats/stats_reports.h"

namespace apptracer {

namespace {

constexpr int64_t kMinLateNs = 100'000;

}  // namespace

ReportOutput stragglers_report(trace::Trace& trace) {
  ranks::Stragglers stragglers = ranks::find_stragglers(trace, kMinLateNs);
  if (stragglers.joined == 0) {
    return {{}, "stragglers: no collective joins two ranks' calls (merge the ranks' traces first: "
                "apptracer merge -o job.db RANK_TRACES...)"};
  }
  Table table{"stragglers",
              {"collective", "seq", "ranks", "late_rank", "process_id", "arrival_ns", "late_by_ns",
               "wait_ns", "step_range", "step", "held_by", "cause", "cause_start_ns", "cause_ns"},
              {}};
  const trace::TimeOrigin& origin = trace.origin();
  for (const ranks::Straggler& late : stragglers.late) {
    table.rows.push_back({std::string(to_string(late.kind)), optional_cell(late.seq), late.nranks,
                          late.late_rank, int64_t{late.late_process}, origin.since(late.arrival_ns),
                          late.late_by_ns, late.wait_ns, late.step_range, late.step, late.held_by,
                          late.cause, origin.since(late.cause_start_ns), late.cause_ns});
  }
  return {{table}, table.rows.empty() ? "stragglers: no rank was late by 100 us or more" : ""};
}

}  // namespace apptracer
