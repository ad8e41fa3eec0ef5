// The order in which the program's operations really happened to memory.
//
// Operations on one stream run in the order they were issued. Across streams
// only explicit dependencies order them: an event recorded on one stream and
// waited for on another, or a synchronization after which the host issued
// more work. Between those constraints, operations are taken by start time
// (GPU start when known, else the time they were issued), so a trace whose
// GPU timestamps are missing or skewed still yields a valid order.
#pragma once

#include <cstdint>
#include <vector>

#include "trace_reader.h"

namespace apptracer::dvdg {

// Positions into trace.ops, in program order.
std::vector<uint32_t> program_order(const TraceOps& trace);

}  // namespace apptracer::dvdg
