// The analyzer's one vocabulary of operations: what a program did to memory
// and to its streams, whichever table a row of it is in, with one convention
// for when it happened. The DVDG's ops, what-if's replayed work and the
// diagnoses' findings all speak it.
#pragma once

#include <cstdint>
#include <string_view>

#include "analyzer/trace/packed_rows.h"
#include "apptracer/enums.h"

namespace apptracer::trace {

// Migration: unified memory moved between host and devices (CUPTI's
// migration records, grouped per allocation, direction and causing op).
// HostPhase: the CPU touching managed memory between GPU work, which is what
// made the migrations it caused. Collective: one NCCL/MPI collective, every
// rank's part of it joined into one op; Message: a point-to-point send and
// the receive it matched (or either end alone). Prefetch: a managed-memory
// prefetch (a memcpys row of kind prefetch). EventRecord, EventWait: an event
// recorded into or waited for on a stream, which order streams.
enum class OpKind : uint8_t {
  Allocation, Free, Copy, Memset, Kernel, Migration, HostPhase, Collective, Message,
  Prefetch, EventRecord, EventWait,
};
// "allocation", "free", "copy", "memset", "kernel", "migration", "host phase",
// "collective", "message", "prefetch", "event record", "event wait": the
// names dvdg_ops.kind and whatif_critical_path.kind store.
std::string_view to_string(OpKind kind);
// Allocations and frees make and end memory rather than read or write it.
bool is_lifetime_op(OpKind kind);

// One operation: its row, where it ran and when.
struct Operation {
  OpKind kind = OpKind::Kernel;
  CopyKind copy_kind = CopyKind::Unknown;  // copies and prefetches
  ProcessId process = kSingleProcess;
  NullableInt device;
  NullableInt stream;
  int64_t source_id = 0;  // its row's id in the table its kind is read from
  // Issued by the host, started and ended on the GPU (op_times).
  int64_t issue_ns = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = 0;    // copies, memsets, migrations, collectives
  int64_t name_id = 0;  // kernels: strings.id of the demangled (else mangled) name; 0: none
};

// When an operation was issued, started and ended, from its row's nullable
// times: issued at its API call (else when it started); started on the GPU
// (else when issued), never before it was issued (work does not run before
// it is asked for: an earlier GPU time is clock skew); ended on the GPU, never
// before it started (else at its start).
void set_times(Operation& op, NullableInt api_start_ns, NullableInt gpu_start_ns,
               NullableInt gpu_end_ns);

// The GPU a copy belongs to: the one whose memory it touches, the
// destination's first (a copy into managed memory: the destination's).
NullableInt copy_device(const Packed<MemcpyRow>& copy);

// strings.id of a kernel's demangled name, else of its mangled name; 0: none.
int64_t kernel_name_id(const Packed<KernelRow>& kernel);

// The operation a row is. A copy of kind prefetch is a Prefetch.
Operation operation_of(const Packed<MemcpyRow>& copy);
Operation operation_of(const Packed<MemsetRow>& memset);
Operation operation_of(const Packed<KernelRow>& kernel);
Operation operation_of(const Packed<StreamEventRow>& event);

}  // namespace apptracer::trace
