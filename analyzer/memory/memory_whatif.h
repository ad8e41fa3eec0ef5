// What-if for memory, from the lifetimes the model knows: a device's peak if
// every allocation and block were freed at its last use (one never used:
// never made), and if the framework allocators' caches were emptied at the
// start of every step.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/memory/memory_model.h"

namespace apptracer::memory {

struct MemoryWhatIf {
  // Freed at last use: the most live at once (caches not counted, as an
  // allocator reusing freed bytes at once would have none), to compare with
  // DeviceMemory::peak_live_bytes. Library and NCCL/MPI memory keep their
  // lifetimes: their kernels use it through pointers no argument shows.
  int64_t freed_at_last_use = 0;
  // Caches emptied at each step's start (torch.cuda.empty_cache()): the most
  // in use, each allocator then holding the most its blocks held since the
  // step began (a lower bound: fragmentation can make it hold more).
  // Without steps the whole run is one phase.
  int64_t cache_released_between_steps = 0;
};

MemoryWhatIf memory_what_if(trace::Trace& trace, const MemoryModel& model, const DeviceMemory& device);

// The span of the device's process a step window leaves (the whole trace
// without one): [first, second).
std::pair<int64_t, int64_t> window_of(trace::Trace& trace, const DeviceMemory& device);

// The most live at once in [from, to), from (time, bytes) changes: what was
// live before `from` carries into it; changes at one time count together.
int64_t most_live(std::vector<std::pair<int64_t, int64_t>> changes, int64_t from, int64_t to);
// The same, sorting `changes` where it is: a caller asking twice of millions
// of changes (before and after adding a few) holds them once.
int64_t most_live_sorting(std::vector<std::pair<int64_t, int64_t>>& changes, int64_t from, int64_t to);

}  // namespace apptracer::memory
