// The report's memory section, from the memory model (analyzer/memory): per
// device, memory in use over time stacked by owner with the peak marked, the
// owners and the pieces live at the peak (each one's producer and first and
// last use), and the what-if peaks (`stats --report memory` as a page).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "analyzer/dvdg/graph.h"
#include "analyzer/memory/memory_model.h"
#include "analyzer/trace/trace.h"

namespace apptracer::report {

// Pieces live at a device's peak listed one by one (the largest; the owners'
// totals count them all).
inline constexpr size_t kLivePieceLimit = 50;

// {"devices": [{"device", "pid", "peak_bytes", "peak_ms", "peak_step",
//   "peak_live_bytes", "peak_if_freed_at_last_use",
//   "peak_if_cache_released_between_steps", "owners": [name, ...],
//   "times_ms": [...], "bytes": [[per owner, at each time], ...],
//   "at_peak": [{"owner", "bytes", "pieces"}], "live": [{"owner", "row",
//   "bytes", "producer" (a kernel's name shortened), "producer_nvtx",
//   "producer_step", "allocated_ms", "first_use_ms", "last_use_ms",
//   "freed_ms"}], "live_pieces"}]}; at most
// `points` times per device (each the moment of most memory in its stretch
// of time, so the peak is kept). Times in ms since the trace's start.
// `model` is the trace's memory model, built from `graph`.
nlohmann::json memory_section(trace::Trace& trace, const dvdg::Graph& graph, const memory::MemoryModel& model,
                              size_t points);

}  // namespace apptracer::report
