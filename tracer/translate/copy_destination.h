// Whether a copy into host memory lands on pages nothing has touched yet.
// The driver copies to pageable memory through its own pinned buffer, so a
// never-touched destination makes that CPU copy take a page fault per page:
// such a copy ran four times slower than into touched memory on an H200
// host. Only the moment before the copy can tell (the copy itself touches
// every page), so the call's entry probes the destination: one move_pages
// system call over at most 16 pages, made only for copies of at least
// kProbedCopyBytes, whose staging takes hundreds of microseconds against the
// call's few. A copy whose direction the call leaves to the driver
// (cudaMemcpyDefault, cuMemcpy) is not probed when its destination lies where
// only CUDA's own allocations have been (a lock-free look at the allocation
// registry's regions): a CuPy copy between device buffers pays nothing.
#pragma once

#include <cstdint>

#include "base/numa.h"
#include "buffer/address_regions.h"

namespace apptracer {

struct TracedFunction;

inline constexpr uint64_t kProbedCopyBytes = uint64_t(1) << 20;

// The destination's pages if `function` is a linear copy that may go to the
// host (a direction of device to host or "default", or a driver copy to the
// host) of at least kProbedCopyBytes; {0, 0} otherwise. `params` is the
// call's CUPTI parameter struct; `cuda_memory` the regions CUDA's
// allocations were made in.
PageTouch probe_copy_destination(const TracedFunction& function, const void* params,
                                 const AddressRegions& cuda_memory);

}  // namespace apptracer
