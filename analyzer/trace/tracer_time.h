// The tracer's own time on the program's threads, from the trace's
// `tracer_time` rows (sampled by the tracer: tracer/base/self_cost.h).
// Tracing lengthens a program's host time twice: inside its CUDA calls
// (CUPTI's callbacks and the tracer's: what `apptracer links` measures per
// launch, model/tracing_cost.h) and between them, where the tracer's hooks
// run on the program's threads: the host allocator's (malloc and free), the
// framework allocator's block events and PyTorch's module and op ranges. A
// saving priced from a traced step counts the second as the program's own
// work unless it is taken off: on a launch-bound PyTorch step it was most of
// what the traced step took beyond the untraced one (bench/RESULTS.md).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;

class TracerTime {
 public:
  // One stretch's time on the program's threads, estimated from its
  // sampled sites: between the calls (the hooks) and in them (the tracer's
  // CUDA callbacks; CUPTI's own work around them is not timed).
  struct Stretch {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t between_ns = 0;
    int64_t in_calls_ns = 0;
  };

  // Empty for a trace recorded before the table existed.
  static TracerTime read(Trace& trace);
  void add(ProcessId process, Stretch stretch);  // then finish()
  void finish();

  bool empty() const { return by_process_.empty(); }
  // Whether any stretch timed the tracer's callbacks in the calls.
  bool measures_callbacks() const { return measures_callbacks_; }
  // The tracer's time between calls within [from, to] of a process: each
  // stretch's, in the share of it that [from, to] overlaps.
  int64_t between_calls_ns(ProcessId process, int64_t from, int64_t to) const;
  // The same for the tracer's callbacks inside the calls.
  int64_t in_calls_ns(ProcessId process, int64_t from, int64_t to) const;
  // A process's stretches, by start (none: empty).
  const std::vector<Stretch>& stretches(ProcessId process) const;

 private:
  int64_t prorated(ProcessId process, int64_t from, int64_t to, int64_t Stretch::*part) const;

  std::unordered_map<ProcessId, std::vector<Stretch>> by_process_;
  bool measures_callbacks_ = false;
};

// The share of the stretch [start, end) that [from, to) overlaps, 0 to 1.
double overlap_share(int64_t start, int64_t end, int64_t from, int64_t to);

// What a row's site took in its stretch, estimated: its timed calls' time,
// less one clock read each (`clock_ns`: a timed call's time holds one),
// times sample_every.
int64_t estimated_ns(const Packed<TracerTimeRow>& row, int64_t clock_ns);
// What one clock read cost where the trace was recorded
// (meta.tracer_time_clock_ns; 0 where absent).
int64_t clock_read_ns(Trace& trace);

// Whether a site of the tracer runs on the program's threads between its
// CUDA calls (the hooks), rather than inside them or on the tracer's threads.
bool runs_between_calls(TracerSite site);

}  // namespace apptracer::trace
