// What `whatif` replays, read from a trace: each thread's API calls (the
// host's time line), the GPU work they issued, the event records and waits
// that order streams, the synchronizations that block the host, and NVTX
// ranges (the phases a result is broken down by).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/trace/operations.h"
#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"

namespace apptracer::whatif {

using trace::NullableInt;
using trace::OpKind;

// One API call of a thread, as the host saw it. Calls made inside another
// call (a library calling the runtime) are folded into the outermost one:
// the host is busy in that call for its whole duration either way.
struct HostCall {
  int64_t row_id = 0;  // api_calls.id (of the outermost call)
  int64_t tid = 0;
  int64_t name_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t previous = -1;  // the thread's call before it, -1 for its first
  // The call of another thread whose end woke this one's thread (-1: none):
  // the thread idled, and this call began soon after that call ended, as
  // PyTorch's autograd thread begins a backward pass once the main thread
  // asks for it, and the main thread goes on once the backward pass ends.
  // Replayed, the call keeps its recorded delay after that call, so a
  // thread that gets faster starts the threads it wakes sooner.
  int32_t woken_by = -1;
};

// One operation on a stream, as recorded (the trace model's: a kernel, copy,
// memset or prefetch, or an event recorded into or waited for on a stream,
// zero-length markers that order streams), with what replaying it needs. A
// prefetch's bytes are those that moved.
struct ReplayOp : trace::Operation {
  int32_t call = -1;  // the HostCall that issued it; -1 unknown
  // Copies (and prefetches: their direction and GPU).
  MemoryKind src_memory = MemoryKind::Unknown;
  MemoryKind dst_memory = MemoryKind::Unknown;
  NullableInt src_device, dst_device, src_numa, dst_numa;
  int64_t dst_sampled_pages = 0;    // pageable destinations: pages sampled as it began,
  int64_t dst_untouched_pages = 0;  // and how many of them nothing had touched
  bool is_async = true;
  // Kernels: the managed memory their accesses migrated to their GPU on
  // demand (um_events, recorded with --unified-memory).
  int64_t faulted_in_bytes = 0;
  // Markers.
  int64_t event_handle = 0;
};

struct SyncCall {
  int32_t call = -1;
  SyncKind kind = SyncKind::Device;
  NullableInt device;
  NullableInt stream;
  NullableInt event_handle;
};

struct NvtxRange {
  std::string name;
  int64_t tid = 0;
  int64_t depth = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct ReplayInput {
  std::vector<HostCall> calls;  // by thread, in start order
  std::vector<ReplayOp> ops;    // in issue order
  std::vector<SyncCall> syncs;
  // How each stream (CUPTI's id) orders with its context's legacy default
  // stream (`streams`; none in traces recorded before it was kept).
  std::unordered_map<int64_t, StreamKind> stream_kinds;
  std::vector<NvtxRange> ranges;  // closed ranges only
  std::unordered_map<int64_t, std::string> names;  // strings.id -> text, for calls and kernels
  std::vector<std::string> device_names;            // the traced GPUs', by ordinal (`devices`)
};

// The tables a replay reads; a trace lacking one is refused (TraceError).
const std::vector<const char*>& replay_tables();

// Throws TraceError (trace_file.h) naming the trace when a needed table is
// missing, the trace is a merged one (its processes' streams and threads
// are not one program's), or there is nothing to replay.
ReplayInput read_replay_input(trace::Trace& trace);

}  // namespace apptracer::whatif
