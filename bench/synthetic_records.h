// Synthetic tracer records for the store benchmark: per operation, the same
// records, in the same order and with the same correlation ids, as the
// tracer's callbacks emit for it (tracer/translate/), so the
// writer does the same inserts, address resolutions and activity joins.
//
//   launch      kernel, its 3 pointer arguments, runtime cudaLaunchKernel call
//               (its cuLaunchKernel folded in); later its GPU kernel activity
//               (4 records)
//   copy        64-byte copy from pinned host to device memory, runtime
//               cudaMemcpyAsync call (its cuMemcpyHtoDAsync folded in); later
//               its GPU copy activity (3 records)
//   host-alloc  a pageable host allocation and its free (2 records): what
//               --host-allocations=all stores; no API row
//   tensor      a tensor block a framework allocator hands out of a device
//               buffer and takes back (allocated, free requested, freed: 3
//               records), through the tracer's framework-allocator hook as
//               PyTorch's trace tracker calls it (frameworks::record_event)
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"

namespace apptracer::bench {

enum class Operation { Launch, Copy, HostAlloc, TensorBlock };

// The device and pinned host buffers copies and launches touch, registered in
// `registry` with their allocation records appended to `buffers`.
void add_buffers(RecordBuffers& buffers, AllocationRegistry& registry);

// One producer thread's operations. Activity records trail their API-side
// records by a fixed lag, as CUPTI delivers them later, in batches.
class RecordSource {
 public:
  RecordSource(RecordBuffers& buffers, AllocationRegistry& registry, int thread_index, int threads);

  // Appends the records of one operation.
  void emit(Operation op);
  // Appends the activity still trailing.
  void flush_activity();

 private:
  uint32_t next_correlation_id();
  // The outermost call's record, its first driver call folded in (as the tracer does).
  Record runtime_call(uint32_t correlation_id, const char* name, uint16_t cbid,
                      const char* driver_name);
  void emit_launch();
  void emit_copy();
  void emit_host_alloc();
  void emit_tensor_block();
  void trail(const Record& activity);

  RecordBuffers& buffers_;
  AllocationRegistry& registry_;
  const int thread_index_;
  const int threads_;
  uint64_t operations_ = 0;
  uint64_t clock_ns_;
  std::deque<Record> trailing_activity_;
  std::vector<uint32_t> kernel_names_;  // interned once, as the tracer caches names per handle
};

}  // namespace apptracer::bench
