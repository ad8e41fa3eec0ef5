// The report's what-if section: with --system, the trace replayed on that
// machine as recorded and with the changes a user tries first (pinned host
// buffers, copies overlapped with kernels, both, and prefetched managed
// memory where the trace has some), each with `apptracer whatif`'s tables;
// and the what-if results stored in the trace (`whatif --store`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apptracer/sqlite.h"
#include "analyzer/trace/trace.h"

namespace apptracer::report {

// {"system", "recorded_on", "recorded_ns", "scenarios": [{"changes",
// "predicted_ns", "baseline_ns", "phases": [{"name", "count", "recorded_ns",
// "predicted_ns"}], "tables" (whatif's), "notes"} or {"changes", "error"}]};
// null without a system file. Each priced against `untraced_step_ns` where
// given (--untraced-step).
nlohmann::json whatif_runs(trace::Trace& trace, const std::string& system_file,
                           std::optional<int64_t> untraced_step_ns = std::nullopt);

// The whatif_* tables `whatif --store` wrote into the trace, as they are;
// only declared ones, which open_trace checked are tables (a view of another
// name could run anything).
nlohmann::json stored_whatif_tables(Database& db);

}  // namespace apptracer::report
