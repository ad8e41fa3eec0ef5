// Turns a trace's operations, in program order, into versioned values and
// dependence edges (the semantics of docs/dvdg.md).
#pragma once

#include "analyzer/trace/trace.h"
#include "analyzer/dvdg/graph.h"
#include "analyzer/progress.h"
#include "analyzer/dvdg/op_accesses.h"

namespace apptracer::dvdg {

// `order` lists positions into trace.ops in program order.
Graph build_graph(OpAccesses&& trace, const std::vector<uint32_t>& order);

// Reads the trace, orders its operations and builds the graph; each phase
// shown on `progress` when one is given.
Graph build_graph_from_trace(trace::Trace& trace,
                             KernelAccesses kernel_accesses = KernelAccesses::Exact,
                             Progress* progress = nullptr,
                             TraceRowsAfter rows_after = TraceRowsAfter::Kept);

}  // namespace apptracer::dvdg
