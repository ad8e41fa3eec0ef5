// What the DVDG is built from: the trace model's operations
// (trace_operations.h) as the DVDG's ops, in trace order, with the memory
// locations each one touches and how (its accesses); the collectives' rank
// calls; and the stream events and synchronizations that order them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/trace/trace.h"
#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

// One byte range of one location an operation reads or writes. Held by the
// million (a few per kernel launch), hence the bit fields.
struct Access {
  Access() : location(0), reads(0), writes(0), known_read(0), exact(0), to_end(0), granule_rounded(0) {}

  uint32_t op = 0;  // position in OpAccesses::ops
  uint32_t location : kLocationBits;
  uint32_t reads : 1;
  uint32_t writes : 1;
  // The read is certain (copy source, const parameter), not assumed; only a
  // certain read of memory holding no data is reported as uninitialized (a
  // pointer's, `to_end`, only when nothing in its extent holds data).
  uint32_t known_read : 1;
  // The write replaces [begin, end) entirely (linear copies, memsets): nothing
  // of what was there survives. Kernels (and 2D copies) may leave parts as they were.
  uint32_t exact : 1;
  // A pointer (kernel argument): it reaches to the end of the region it lands
  // in, which sub-allocations may make shorter than its allocation.
  uint32_t to_end : 1;
  // The Compute Sanitizer's range (--exact), rounded out to its granules
  // (OpAccesses::exact_granule_bytes): each granule in it was touched, but
  // not each byte, so only a whole granule nothing wrote is certainly read
  // uninitialized.
  uint32_t granule_rounded : 1;
  int64_t begin = 0;  // byte range inside the location, end exclusive
  int64_t end = 0;
};

// Linear copies' and messages' accesses: where the access's `begin` falls in
// the copied bytes, so each byte written depends on the byte it was copied
// from. Copies are few beside the kernels' millions of accesses, so their
// positions are held apart, not in each access.
struct AccessPosition {
  uint32_t access = 0;  // position in OpAccesses::accesses
  int64_t position = 0;
};

// A sub-allocation's lifetime, for resolving addresses to the block live at
// an operation's issue time.
struct Block {
  uint32_t location = 0;
  ProcessId process = trace::kSingleProcess;  // blocks split only their own process's allocations
  int64_t address = 0;
  int64_t bytes = 0;
  int64_t alloc_ns = 0;
  int64_t free_ns = INT64_MAX;  // INT64_MAX: live at the end of the trace
};

// A rank's call of a collective or message, where it orders the op against
// that rank's own work (program_order says how): on a stream, the calls of
// the ranks other than the one whose lane holds the op; on the host (MPI),
// every rank's call, the op having a lane of its own.
struct RankCall {
  uint32_t op = 0;  // position in OpAccesses::ops
  ProcessId process = trace::kSingleProcess;
  trace::NullableInt device;
  trace::NullableInt stream;
  int64_t issue_ns = 0;
  int64_t host_done_ns = 0;  // the call returned, or a wait saw it done
  bool receives = false;     // the rank's later work may read what the op wrote
  // The NCCL kernel that ran the rank's part, in the rank's stream lane: what
  // that stream waited for before the call (an event from another stream)
  // is ordered before this kernel, so the op comes after it. Op::kNoOp: none traced.
  uint32_t kernel = Op::kNoOp;
};

struct OpAccesses : OpTable {
  // ops: not yet in program order
  // access_begin[i] .. access_begin[i + 1] index `accesses` (sorted by op):
  // what op i touches.
  std::vector<uint32_t> access_begin;
  std::vector<Access> accesses;
  std::vector<AccessPosition> positions;  // by access
  // What orders streams: the trace's event records and waits, and its
  // synchronizations (the model's, which outlive the graph's build).
  const trace::Rows<StreamEventRow>* stream_events = nullptr;
  const std::vector<trace::Sync>* syncs = nullptr;
  std::vector<RankCall> rank_calls;
  int64_t exact_granule_bytes = 1;  // the sanitizer's granule (meta exact.granularity_bytes)

  // Calls f(op, location, writes) for each access's read (writes false)
  // and write (true), by op.
  template <typename F>
  void for_each_location_use(F&& f) const {
    for (uint32_t op = 0; op < ops.size(); ++op) {
      for (uint32_t a = access_begin[op]; a < access_begin[op + 1]; ++a) {
        if (accesses[a].reads) f(op, static_cast<uint32_t>(accesses[a].location), false);
        if (accesses[a].writes) f(op, static_cast<uint32_t>(accesses[a].location), true);
      }
    }
  }
};

// Where a kernel's accesses come from when --exact recorded them too.
enum class KernelAccesses {
  Exact,       // what the GPU really touched, the arguments' where it may have missed some
  Signatures,  // the arguments' accesses alone, as without --exact (to compare the two)
};

// What the trace keeps of its rows once the graph's ops are found and
// ordered: all, for a caller that reads them afterwards; all but the
// framework blocks' (the ops' locations hold what the graph needs of them),
// which go as soon as they are read; or none (Trace::release_rows, once the
// ops are ordered), so that the graph is built beside what it needs alone.
enum class TraceRowsAfter { Kept, AllButBlocks, Released };

// The ops and their accesses, from the trace's operations, collectives,
// unified-memory migrations and framework blocks.
OpAccesses find_op_accesses(trace::Trace& trace,
                        KernelAccesses kernel_accesses = KernelAccesses::Exact,
                        TraceRowsAfter rows_after = TraceRowsAfter::Kept);

}  // namespace apptracer::dvdg
