// A device's memory in use over time by owner (memory_owners.h): what the
// report stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/memory/memory_model.h"

namespace apptracer::memory {

struct OwnerSeries {
  std::vector<std::string> owners;          // owner_name()s, in order of first appearance
  std::vector<int64_t> times;               // trace clock
  std::vector<std::vector<int64_t>> bytes;  // per owner, at each time
};

// Every owner's bytes after each change (one point per time). With `points`,
// at most that many are kept: in each of `points` equal stretches of time,
// the moment most was in use.
OwnerSeries owner_series(const MemoryModel& model, const DeviceMemory& device, size_t points = SIZE_MAX);

}  // namespace apptracer::memory
