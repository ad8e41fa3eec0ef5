// A trace's GPU work per kernel name, copy path, memset and collective: how
// many, how long on the GPU and how many bytes. The host time of allocation
// calls is allocations_profile.h's and NVTX ranges, which enclose work
// rather than do it, are nvtx_profile.h's: a pinned twin's slower
// allocations never outrank the copy time it saved.
#pragma once

#include "analyzer/trace/trace.h"
#include "device_labels.h"
#include "profile.h"

namespace apptracer::diff {

// Measures "count", "time_ns", "bytes"; time is GPU time (work whose GPU
// record was lost counts, without time).
Profile operations_profile(trace::Trace& trace, const DeviceLabels& devices);

}  // namespace apptracer::diff
