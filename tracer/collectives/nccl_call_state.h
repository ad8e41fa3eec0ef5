// The NCCL API call in progress on a thread, shared by the interposed API
// (nccl_api.cpp) and the profiler plugin (nccl_profiler.cpp). NCCL calls the
// profiler's CollApi/P2pApi events synchronously inside the API call, on the
// caller's thread (its enqueue path), so the plugin leaves what only it knows
// here and the interposer writes one record with everything.
#pragma once

#include <cstdint>

#include "collectives/communicators.h"

namespace apptracer::nccl {

struct CallState {
  int depth = 0;         // interposed calls in progress: NCCL calls its own API inside them
  uint64_t op_id = 0;    // the profiler's id for the outermost call's operation (0: it saw none)
  CommState* profiled_comm = nullptr;  // the profiler's context for it
  bool graph_captured = false;
  int group_depth = 0;   // ncclGroupStart nesting of the program's own calls
  uint32_t group = 0;    // the outermost group in progress, 0 outside one
};

CallState& call_state();

// A new group id (process-wide, never 0).
uint32_t next_group_id();

}  // namespace apptracer::nccl
