// A trace's work per kernel name, copy path, memset, allocation kind and
// collective: how many, how long and how many bytes. NVTX ranges, which
// enclose work rather than do it, are nvtx_profile.h's.
#pragma once

#include "analyzer/trace/trace.h"
#include "analyzer/diff/device_labels.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// Measures "count", "time_ns", "host_ns", "bytes". time_ns is GPU time for
// GPU work (work whose GPU record was lost counts, without time); host_ns is
// the allocating call's host time for allocations (pinning memory is slow: a
// pinned twin pays for it there), kept apart so it is never taken for GPU
// time saved or lost.
Profile operations_profile(trace::Trace& trace, const DeviceLabels& devices);

}  // namespace apptracer::diff
