// A trace's work per kernel name, copy path, memset, allocation kind and
// collective: how many, how long and how many bytes. NVTX ranges, which
// enclose work rather than do it, are nvtx_profile.h's.
#pragma once

#include "analyzer/trace/trace.h"
#include "profile.h"

namespace apptracer::diff {

// Measures "count", "time_ns", "bytes". Time is GPU time for GPU work (work
// whose GPU record was lost counts, without time) and the allocating call's
// host time for allocations.
Profile operations_profile(trace::Trace& trace);

}  // namespace apptracer::diff
