// A trace's NVTX ranges per name: how many and how long in total. A range's
// time is that of the work it encloses, so two runs' ranges are compared
// apart from the work (operations_profile.h), which says why they differ.
#pragma once

#include "analyzer/trace/trace.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// Measures "count", "time_ns" (ranges never closed and marks: counted, no time).
Profile nvtx_profile(trace::Trace& trace);

}  // namespace apptracer::diff
