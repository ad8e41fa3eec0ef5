// Memory over time, as step series: bytes in use on each GPU (its
// allocations, and the blocks framework allocators carved out of them) and
// bytes unified memory migrated so far, by direction. The timeline draws
// them as counter tracks; `apptracer stats --report memory_timeline` lists
// them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"

namespace apptracer {

// Whether an allocation of this kind holds memory of its own: VMM
// reservations (address space only), VMM mappings (of physical allocations
// already counted) and registered host memory (pageable memory already
// counted when the program allocated it) do not, so one byte is never
// counted twice.
bool holds_own_memory(AllocKind kind);

struct MemorySeries {
  trace::ProcessId process = trace::kSingleProcess;
  std::string name;  // "GPU 0 memory allocated", "UM migrated HtoD"
  // (time on the trace clock, bytes from then on), by time, one per time.
  std::vector<std::pair<int64_t, int64_t>> points;
};

// Every series the trace has data for, by process and name.
std::vector<MemorySeries> read_memory_series(trace::Trace& trace);

}  // namespace apptracer
