// Which NUMA node host memory lives on.
#pragma once

#include <cstdint>

namespace apptracer {

// The NUMA node holding most of the resident pages of [address, address +
// bytes), from at most 16 pages spread over the range; -1 when none is
// resident or the kernel cannot say. move_pages with no target nodes only
// reports where pages are: it neither moves nor faults them in.
int numa_node_of(uint64_t address, uint64_t bytes);

}  // namespace apptracer
