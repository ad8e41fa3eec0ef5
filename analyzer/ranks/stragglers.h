// Cross-rank stragglers in a merged trace (`apptracer merge`): for each
// collective the ranks' calls were joined into, which rank arrived last and
// by how much, what the others waited for it, and what on its own timeline
// held it back, walking back from its arrival:
//   - its GPU stream was still busy when the collective was issued: the
//     kernel, copy or memset that ran up to its arrival;
//   - else its host issued the collective late: a synchronization the host
//     was blocked in, another host call, or host time with no CUDA call at
//     all (a "host gap": the program computing, sleeping, loading data).
// A rank arrives when its part can start on the GPU (its NCCL kernel's
// start), else when it was called (MPI, or a kernel record lost).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"

namespace apptracer::ranks {

struct Straggler {
  int64_t collective_id = 0;  // the late rank's collectives row
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::optional<int64_t> seq;  // its collectives.seq
  int64_t nranks = 0;          // calls joined
  trace::ProcessId late_process = trace::kSingleProcess;
  int64_t late_rank = 0;   // in the collective's communicator
  int64_t arrival_ns = 0;  // on the trace's clock
  int64_t late_by_ns = 0;  // after the rank that arrived just before it
  int64_t wait_ns = 0;     // the other ranks' waits for it, summed: its cost to the job
  // The outermost NVTX range open on the late rank when it issued the call
  // (its family: "step" for "step 5", analyzer/trace/step_names.h), and
  // which step: the number in its name, else which occurrence of the family
  // (from 1); "" and 0 when none.
  std::string step_range;
  int64_t step = 0;
  std::string held_by;  // "kernel", "copy", "memset", "synchronization", "host call", "host gap"
  std::string cause;    // the kernel, copy path, or host call's name; "" for a host gap
  int64_t cause_start_ns = 0;  // on the trace's clock
  int64_t cause_ns = 0;        // how long it held the rank back before the collective could start
};

// Below this a late rank is the jitter of a balanced job, not a straggler
// worth a diagnosis.
inline constexpr int64_t kStragglerMinLateNs = 1'000'000;

struct Stragglers {
  int64_t joined = 0;  // collectives of two calls or more
  // Those whose last rank arrived at least min_late_ns after the one before
  // it, by wait_ns, largest first.
  std::vector<Straggler> late;
};

Stragglers find_stragglers(trace::Trace& trace, int64_t min_late_ns);

}  // namespace apptracer::ranks
