// Which operation each unified-memory event of a trace belongs to. CUPTI's
// unified-memory records name no kernel or API call, only times, addresses
// and devices, so both the DVDG (migration ops) and `stats --report um`
// attribute them here, the same way:
//
//  * a migration into a device (HtoD, DtoD) or out of one (DtoH: an eviction),
//    and a GPU page-fault group, belongs to the GPU work (kernel, else copy or
//    memset) whose GPU window [gpu_start_ns, gpu_end_ns] on that device
//    contains its start: faults of a kernel, or a copy or memset of managed
//    memory. A migration with CUPTI's cause "user" was asked for by a call
//    (a prefetch, a copy, a memset), never by a kernel's faults, so kernels
//    are passed over for it;
//  * otherwise, it belongs to the latest prefetch (memcpys row of kind
//    prefetch) of the same allocation, towards the same side, covering its
//    address and issued at or before it (prefetches get no GPU times);
//  * any other migration belongs to a host phase: the CPU touching managed
//    memory between GPU work. One phase per maximal run of such migrations
//    with no GPU work starting in between.
//
// Everything else (CPU faults, thrashing, throttling, remote maps) is left
// unattributed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer::trace {

class Trace;

// The host side of a migration, as a residency: CUDA's cudaCpuDeviceId.
inline constexpr int64_t kHostResidency = -1;

struct UmEvent {
  int64_t id = 0;  // um_events.id
  UmCounterKind kind = UmCounterKind::Unknown;
  int64_t address = 0;
  int64_t bytes = 0;  // bytes moved (migrations) or region size; 0 when none
  int64_t value = 0;  // CUPTI's raw value
  std::optional<int64_t> alloc_id;
  int64_t src = kHostResidency;  // residency: device ordinal or kHostResidency
  int64_t dst = kHostResidency;
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // start_ns when CUPTI gave no end
  int64_t cause = 0;   // um_events.cause, 0 when NULL

  bool is_migration() const {
    return kind == UmCounterKind::BytesHtoD || kind == UmCounterKind::BytesDtoH ||
           kind == UmCounterKind::BytesDtoD;
  }
};

enum class UmCauseKind : uint8_t { None, Kernel, Copy, Memset, Prefetch, HostPhase };

struct UmCause {
  UmCauseKind kind = UmCauseKind::None;
  // kernels.id, memcpys.id (copies, prefetches), memsets.id, or an index
  // into host_phases
  int64_t row = 0;
};

struct HostPhase {
  int64_t first_event_id = 0;  // um_events.id of its first migration
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct UmTrace {
  std::vector<UmEvent> events;  // by start time, then id
  std::vector<UmCause> causes;  // parallel to events
  std::vector<HostPhase> host_phases;  // in time order
};

// Whether the trace has the unified-memory columns of schema version 2
// (um_events.cause and alloc_offset, mem_advice.stream). Older traces have
// the tables but not what the analyzer needs to read them.
bool has_um_columns(Trace& trace);

// Every um_events row with its cause. Empty for a trace without the columns.
// (Trace::unified_memory() holds it once for every analysis of a command.)
UmTrace read_um_trace(Trace& trace);

}  // namespace apptracer::trace
