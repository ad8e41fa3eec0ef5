// Large allocations on transparent huge pages. The analyzer allocates and
// frees vectors of tens to hundreds of megabytes many times over on a large
// trace (rows, accesses, graphs, sort buffers); each comes as fresh pages the
// kernel faults in and zeroes 4 KiB at a time, about a tenth of diagnose's
// time on a million kernels. The apptracer command replaces operator new
// (huge_pages.cpp) so that every allocation of at least kHugePageBytes asks
// for 2 MiB pages, as glibc.malloc.hugetlb=1 would, without setting that
// tunable for the programs `record` runs.
#pragma once

#include <cstddef>

namespace apptracer {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Asks for huge pages over the whole 2 MiB pages inside [memory, memory +
// bytes); false when the kernel refused (no transparent huge pages) or none
// lies inside.
bool advise_huge_pages(void* memory, size_t bytes);

}  // namespace apptracer
