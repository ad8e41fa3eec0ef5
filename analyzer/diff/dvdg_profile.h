// A trace's data-flow graph (DVDG) per kernel name and copy path: how many
// values its operations wrote, how many dependence edges they made, and how
// many bytes moved along those edges (copies, memsets, collectives: a
// kernel's edges carry no byte count).
#pragma once

#include "analyzer/trace/trace.h"
#include "analyzer/diff/device_labels.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// Measures "values", "edges", "edge_bytes". Builds the graph without storing
// it: the trace is not changed.
Profile dvdg_profile(trace::Trace& trace, const DeviceLabels& devices);

}  // namespace apptracer::diff
