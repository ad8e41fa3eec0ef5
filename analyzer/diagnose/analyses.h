// Holistic Trace Analysis's single-process analyses, computed from an
// apptracer trace (README.md: "nsys analyze and HTA coverage"). Each is a
// table (`apptracer diagnose --analyses`, and the report); the time series
// (memory bandwidth, queue length) are also given as points for plots.
#pragma once

#include <string>
#include <vector>

#include "analyzer/diagnose/rules.h"
#include "analyzer/table/table.h"
#include "analyzer/diagnose/trace_facts.h"

namespace apptracer::diagnose {

// Per device: GPU span split into kernels (compute), copies and memsets
// only (memory), idle. (HTA temporal breakdown)
Table temporal_breakdown(const TraceFacts& facts);
// Per device: idle time between GPU work split into the host issuing late
// ("host wait") and issue-to-start latency ("launch wait"). (HTA idle time breakdown)
Table idle_breakdown(const TraceFacts& facts);
// GPU time by kind (computation: kernels; memory: copies by direction,
// memsets) and the kernels by time. (HTA kernel breakdown)
Table kernel_breakdown(const TraceFacts& facts);
// Per kernel name: launches, launch call time, GPU time, launch delay,
// short launches. (HTA CUDA kernel launch statistics)
Table launch_statistics(const TraceFacts& facts, const Thresholds& limits);
// Per device: copy time and how much of it overlapped kernels.
// (HTA communication/computation overlap, with copies as the communication)
Table copy_compute_overlap(const TraceFacts& facts);
// Per copy direction: bytes, time, mean and peak bandwidth over time bins.
// (HTA memory bandwidth summary)
Table memory_bandwidth(const TraceFacts& facts);
// Per stream: work queued (issued, not finished) over time, mean and most.
// (HTA queue length summary)
Table queue_length(const TraceFacts& facts);
// The most frequent sequences of 2 and 3 kernels on one stream: fusion
// candidates. (HTA frequent CUDA kernel sequences)
Table kernel_sequences(const TraceFacts& facts);

std::vector<Table> all_analyses(const TraceFacts& facts, const Thresholds& limits);

// A time series: per bin start (ns from the trace start), a value.
struct Series {
  std::string name;
  std::vector<std::pair<int64_t, double>> points;
};
// Copy bandwidth per direction, GB/s, in `bins` bins over the trace.
std::vector<Series> bandwidth_series(const TraceFacts& facts, int bins);
// Queued work per stream (step points at each change, at most `limit` per stream).
std::vector<Series> queue_series(const TraceFacts& facts, size_t limit);

}  // namespace apptracer::diagnose
