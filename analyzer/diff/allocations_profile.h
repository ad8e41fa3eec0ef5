// A trace's allocations per kind: how many, how long their allocating calls
// took on the host (pinning memory is slow: a pinned twin pays for it there)
// and how many bytes.
#pragma once

#include "analyzer/trace/trace.h"
#include "profile.h"

namespace apptracer::diff {

// Measures "count", "host_ns", "bytes".
Profile allocations_profile(trace::Trace& trace);

}  // namespace apptracer::diff
