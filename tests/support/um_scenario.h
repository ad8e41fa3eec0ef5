// One unified-memory program, as its trace would record it, shared by the
// DVDG and `stats --report um` tests so both state their expectations about
// the same rows (times in ns, one GPU, device 0):
//
//   10     m = cudaMallocManaged(64 MiB); out, out2 = cudaMalloc(4 KiB); q = managed 2 MiB
//   50     cudaMemAdvise(m, set preferred location, device 0)       before m's first touch
//   100    the host writes m: CPU faults at 100 and 110 (first touch: no migration)
//   300    sum(m, out) on stream 7, GPU 300..1300: GPU fault groups at 310 (m) and 320 (m),
//          HtoD 32 MiB of m at 330..600 and 32 MiB at 610..900 (cause coherence: faults);
//          a `__managed__` variable (no allocation) faults at 705 and moves 4 KiB at 700..710
//   1500   sum(m, out2) again, GPU 1500..1600: m is on the GPU, nothing moves
//   1610   cudaDeviceSynchronize until 1700
//   1750   cudaMemAdvise(m, set accessed by, device 0)               after its first touch
//   1800   the host reads m: CPU faults at 1800 and 1810, DtoH 64 MiB at 1805..2000 (coherence)
//   2100   cudaMemPrefetchAsync(q, device 0) on stream 7: HtoD 2 MiB at 2150..2200 (prefetch)
//   2300   scale(q) on stream 7, GPU 2400..2500: q is already there
//   2600   cudaMemPrefetchAsync(q, device 0) again: nothing to move
#pragma once

#include <cstdint>

#include "trace_builder.h"
#include "analyzer/trace/unified_memory.h"

namespace apptracer::testing {

struct UmScenario {
  int64_t m, q, out, out2;  // allocations
  int64_t sum1, sum2, scale;  // kernels
  int64_t prefetch, idle_prefetch;  // memcpys
  int64_t dtoh;  // the um_events row of the host's migration
};

inline constexpr int64_t kMiB = int64_t{1} << 20;

UmScenario add_um_scenario(TraceBuilder& trace);

}  // namespace apptracer::testing
