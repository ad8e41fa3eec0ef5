// Producer -> consumer pairs of GPU operations along the DVDG, read from the
// tables `apptracer dvdg` adds to a trace (analyzer/dvdg/graph_store.cpp), so
// the timeline can draw data flowing from the work that wrote a value to the
// work that read it.
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

// One flow per distinct (producer, consumer) pair of a data edge whose value
// was written by GPU work and read by GPU work (through migrations, to what
// the value moved held), by (producer, consumer). Empty when the trace has
// no DVDG tables.
std::vector<DvdgFlow> read_dvdg_flows(trace::Trace& trace);

}  // namespace apptracer
