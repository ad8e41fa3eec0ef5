// Everything `apptracer report` shows, as one JSON document the page's
// JavaScript renders: first the steady-state step and the findings
// `apptracer diagnose` shows (in its order, with its savings), then the whole
// run: where the time went, kernels, transfers against their path's peak,
// memory by owner with its peak, the timeline of the steady steps, NVTX, the
// HTA analyses, the DVDG (limited to kGraphValueLimit values), the what-if
// predictions (with a system file) and stored results and, with --compare,
// what changed against another trace.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analyzer/trace/trace.h"
#include "analyzer/progress.h"
#include "analyzer/diff/trace_comparison.h"

namespace apptracer::report {

// Values of the DVDG drawn in the page (after folding repeated iterations):
// beyond this the page draws the first ones and says how to see the rest.
inline constexpr size_t kGraphValueLimit = 400;
// Bars per timeline lane and points per plotted series: more are merged.
inline constexpr size_t kTimelineIntervalLimit = 1500;
inline constexpr size_t kSeriesPointLimit = 2000;
// Copies listed one by one (the largest ones; totals count them all).
inline constexpr size_t kTransferLimit = 1000;

// `system_file`: empty for the trace's measured link model. `steps`, where
// chosen (--steps, --steady), limits every section to those steps, as
// diagnose's do; none chosen, the findings are the steady steps' and the
// rest is the whole run's. Each phase is shown on `progress` when one is
// given. `untraced_step_ns` (--untraced-step): the savings per step priced
// against it, diagnose's and the what-if's alike.
nlohmann::json report_data(trace::Trace& trace, const std::string& path,
                           const std::string& system_file, const trace::StepSelection& steps = {},
                           std::optional<int64_t> untraced_step_ns = std::nullopt, Progress* progress = nullptr);

// Findings (diagnose's JSON) as the page shows them: beside the whole
// kernel names, shortened ones (template arguments elided, as diagnose's
// text prints them) in `where.short_names` and `details.short_rows`.
nlohmann::json findings_to_show(nlohmann::json findings);

// `apptracer diff`'s comparison of trace A (the report's) with B, for the
// page: its notes, and of each table the rows that changed beyond the
// threshold (changed_rows.h), with how many others it left out.
nlohmann::json comparison_data(const std::string& a, const std::string& b,
                               const diff::TraceComparison& comparison);

}  // namespace apptracer::report
