// The order in which the program's operations really happened to memory.
//
// Operations on one stream run in the order they were issued. Across streams
// only explicit dependencies order them: an event recorded on one stream and
// waited for on another, or a synchronization after which the host issued
// more work. Between those constraints, operations are taken by start time
// (GPU start when known, else the time they were issued), so a trace whose
// GPU timestamps are missing or skewed still yields a valid order. The ranks
// of a merged trace order a collective's or message's op against their own
// work (add_rank_calls).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/dvdg/op_accesses.h"

namespace apptracer::dvdg {

struct ProgramOrder {
  std::vector<uint32_t> ops;  // positions into trace.ops, in program order
  // Constraints between ranks that contradicted each other (their clocks
  // aligned only approximately), broken so that every op is placed.
  size_t broken_constraints = 0;
};

ProgramOrder program_order(const OpAccesses& trace);

}  // namespace apptracer::dvdg
