// Where host memory lives: on which NUMA node, and whether its pages exist
// yet. Both come from one move_pages call over at most kSampledPages pages
// spread over the range; move_pages with no target nodes only reports where
// pages are: it neither moves nor faults them in.
#pragma once

#include <cstdint>

namespace apptracer {

inline constexpr int kSampledPages = 16;

// The NUMA node holding most of the resident pages of [address, address +
// bytes); -1 when none is resident or the kernel cannot say.
int numa_node_of(uint64_t address, uint64_t bytes);

// Of the sampled pages of [address, address + bytes) that are mapped, how
// many exist and how many were never touched (anonymous memory gets its
// pages at the first write to each). {0, 0} when the kernel cannot say.
struct PageTouch {
  uint8_t mapped = 0;
  uint8_t untouched = 0;
};
PageTouch page_touch(uint64_t address, uint64_t bytes);

}  // namespace apptracer
