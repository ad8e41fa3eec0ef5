// The steady-state step, the report's first screen: per process the steps
// found and how, its start-up, the median step's wall time and GPU busy
// time, and what a median step issues (`stats --report steps`, summed up);
// for a program without steps, the whole run's numbers and why none were found.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/trace/trace.h"

namespace apptracer::report {

// {"found": true, "processes": [{"pid", "steps", "steady_steps", "startup_ns",
//   "median_wall_ns", "median_gpu_busy_ns", "gpu_busy_pct", "launches",
//   "copies", "memsets", "host_gap_ns" (medians per steady step), "found_from"}]}
// or {"found": false, "why", "span_ns", "gpu_busy_pct", "launches", "copies",
//   "memsets"} over the whole run (`facts`).
nlohmann::json step_summary(trace::Trace& trace, const diagnose::TraceFacts& facts);

}  // namespace apptracer::report
