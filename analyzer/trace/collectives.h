// The NCCL/MPI operations of a trace as the DVDG sees them: each rank's
// `collectives` row is one call, and the calls `merge` joined
// (collective_matches: one collective, or a send and its receive) are one
// operation. A call no other rank's row matched (a single rank's trace, a
// rank whose trace was not merged) is an operation of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/trace/packed_rows.h"
#include "apptracer/enums.h"

namespace apptracer::trace {

class Trace;

struct BufferRange {
  std::optional<int64_t> address;
  int64_t bytes = 0;
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> offset;
};

struct CollectiveCall {
  int64_t id = 0;  // collectives.id
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t nranks = 0;
  std::optional<BufferRange> send;  // absent: this rank sent nothing
  std::optional<BufferRange> recv;  // absent: this rank received nothing
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  int64_t api_start_ns = 0;
  // When the host saw it done: the call's return, or for an MPI nonblocking
  // call the wait or test that completed it.
  int64_t host_done_ns = 0;
  std::optional<int64_t> gpu_start_ns;
  std::optional<int64_t> gpu_end_ns;
  std::optional<int64_t> kernel_id;  // NCCL: the kernel that ran it
  ProcessId process = kSingleProcess;
};

// Every operation, each its calls in collectives.id order (a message: the
// send first); operations in the order of their first call. Empty for a
// trace without a collectives table.
std::vector<std::vector<CollectiveCall>> read_collective_operations(Trace& trace);

}  // namespace apptracer::trace
