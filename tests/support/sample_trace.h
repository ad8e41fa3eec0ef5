// The trace every reports test reads: two host threads, three GPU streams,
// copies, kernels (one lost, two overlapping), memsets, syncs, allocations on
// a GPU and on the host, NVTX ranges, and a small DVDG. Every expected number
// in the tests is computed by hand from the rows in sample_trace.cpp.
#pragma once

#include <string>

#include "trace_builder.h"

namespace apptracer::testing {

// Row ids the tests refer to.
struct SampleIds {
  int64_t copy_htod = 0;
  int64_t copy_dtoh = 0;
  int64_t kernel_main = 0;  // vec_add on stream 7, launched by correlation 4
};

// Fills `builder` with the sample trace (without DVDG tables).
SampleIds build_sample_trace(TraceBuilder& builder);

// Adds the dvdg_* tables `apptracer dvdg` would write for a graph
// copy HtoD -> vec_add -> copy DtoH, plus a carry edge that draws no flow.
void add_sample_dvdg(Database& db, const SampleIds& ids);

// What the timeline of the sample (with DVDG) holds.
inline constexpr size_t kSampleTracks = 9;   // process, 2 threads, 2 NVTX, 3 streams, GPU 0 memory
inline constexpr size_t kSampleCounterValues = 6;  // GPU 0 memory allocated, at 6 times
// 12 API calls, 8 timed GPU ops, 3 NVTX ranges on their threads and on the streams of their work
inline constexpr size_t kSampleSlices = 26;
inline constexpr size_t kSampleApiFlows = 5;
inline constexpr size_t kSampleDvdgFlows = 2;

}  // namespace apptracer::testing
