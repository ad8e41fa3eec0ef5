// Producer -> consumer pairs of GPU operations along the DVDG, read from the
// tables `apptracer dvdg` adds to a trace (analyzer/dvdg/graph_store.cpp) or
// from the graph built in memory, so the timeline can draw data flowing from
// the work that wrote a value to the work that read it.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/trace/trace.h"

namespace apptracer {

enum class GpuOp { Kernel, Copy, Memset };

struct DvdgFlow {
  GpuOp from_kind;
  int64_t from_id;  // row id in kernels, memcpys or memsets
  GpuOp to_kind;
  int64_t to_id;
};

// Whether `apptracer dvdg` stored its tables in the trace.
bool has_stored_dvdg(trace::Trace& trace);

// One flow per distinct (producer, consumer) pair of a data edge whose value
// was written by GPU work and read by GPU work (through migrations, to what
// the value moved held), by (producer, consumer). Read from the stored
// tables: empty when the trace has none.
std::vector<DvdgFlow> read_dvdg_flows(trace::Trace& trace);
// The same, from the graph built in memory (the trace is not changed).
std::vector<DvdgFlow> build_dvdg_flows(trace::Trace& trace);

}  // namespace apptracer
