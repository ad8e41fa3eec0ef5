// What a translated API call reports: small helpers that fill one record and
// append it, shared by the runtime and driver handlers so both describe an
// operation the same way. Nothing here takes a lock the writer takes or makes
// a system call: copies carry raw addresses, which the writer resolves.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "apptracer/records.h"
#include "translate/call_site.h"

namespace apptracer {

// Where a record comes from: the outermost traced call on its thread (what
// GPU activity carries) and the call that made it; 0 outside any call.
struct RecordOrigin {
  uint32_t correlation_id;
  uint32_t own_correlation_id;
};
RecordOrigin origin_of(const CallSite& call);
Record make_record(RecordOrigin origin, RecordType type);

// A call captured into a graph (CallSite::captured) did no work now: the
// helpers below that describe copies, memsets, launches and frees record
// nothing for it. An allocation captured into a graph is recorded: its address
// is the one the graph's kernels use at every launch.

// Allocations are registered before the call returns to the program, so a
// record resolving an address later finds the allocation live at that time.
void emit_allocation(CallSite& call, uint64_t address, uint64_t bytes, AllocKind kind,
                     uint32_t flags = 0, uint64_t pitch = 0);
// Memory addresses never resolve into: VMM reservations (`key` = address) and
// physical handles (`key` = handle).
void emit_unresolvable_allocation(CallSite& call, AllocKind kind, uint64_t key, uint64_t address,
                                  uint64_t bytes, uint32_t flags);
void emit_free(CallSite& call, uint64_t address);
// Returns whether an allocation of that kind and key was live.
bool emit_unresolvable_free(CallSite& call, AllocKind kind, uint64_t key);
// The kind of a page-locked host allocation from its flags (the runtime's
// cudaHostAlloc* and the driver's CU_MEMHOSTALLOC_* flags share values).
AllocKind pinned_host_kind(unsigned int flags);

// A linear copy; 2D/3D callers then set width, height and pitches.
MemcpyRecord copy_record(uint64_t dst, uint64_t src, uint64_t bytes, CopyKind kind, bool is_async);
void emit_memcpy(CallSite& call, const MemcpyRecord& copy);

// A memset of `height` rows of `width` elements of `element_size` bytes,
// `pitch` bytes apart; a linear memset is one row with pitch 0.
void emit_memset(CallSite& call, uint64_t address, uint32_t value, uint8_t element_size,
                 uint64_t width, uint64_t height, uint64_t pitch);

// The values every launch call gives; a handler sets any further
// LaunchValues its call gives on what this returns.
struct LaunchDims {
  uint32_t x, y, z;
};
inline LaunchValues launch_values(LaunchDims grid, LaunchDims block, uint32_t dynamic_shared_bytes) {
  LaunchValues launch{};
  launch.grid_x = grid.x;
  launch.grid_y = grid.y;
  launch.grid_z = grid.z;
  launch.block_x = block.x;
  launch.block_y = block.y;
  launch.block_z = block.z;
  launch.dynamic_shared_bytes = dynamic_shared_bytes;
  return launch;
}

// `kernel_params` / `extra` are the driver launch's argument forms (null
// when unknown): words that may be pointers are sent after the launch.
void emit_kernel(CallSite& call, const void* function, const LaunchValues& launch, LaunchKind kind,
                 void** kernel_params, void** extra);

// Words of a kernel's parameters that may be pointers, gathered on the
// launch's hot path. Bounded: a launch sends at most kMaxWords of them
// (pointers sit early in parameter lists and structs; a huge by-value array
// of numbers is not our business).
struct ArgWords {
  static constexpr int kMaxWords = 256;
  KernelArgWord words[kMaxWords];
  int count = 0;

  void scan(const CaptureContext& ctx, const char* bytes, uint32_t buffer_offset, uint32_t size,
            uint16_t param_index, uint32_t param_size);
};
// From the launch's argument forms: `kernel_params`, else the packed `extra`.
void gather_arg_words(const CaptureContext& ctx, const LaunchedFunction& function,
                      void** kernel_params, void** extra, ArgWords& out);
// The KernelArgs records that follow a record whose arguments were read
// (a launch's Kernel record, a kernel node's GraphNode record).
void emit_arg_words(CaptureContext& ctx, RecordOrigin origin, const ArgWords& args);

// A copy's direction and endpoints from the driver's memory types (copy
// calls' parameter structs and copy nodes' CUDA_MEMCPY3D).
CopyKind copy_kind(CUmemorytype src, CUmemorytype dst);
// The linear address of an endpoint (0 for an array, which has none).
uint64_t copy_endpoint(CUmemorytype type, const void* host, CUdeviceptr device);

// `stream` only for stream synchronizations.
void emit_sync(CallSite& call, SyncKind kind, const void* stream, uint64_t event_handle);
void emit_stream_event(CallSite& call, StreamEventKind kind, const void* event, const void* stream);

// --- unified memory ----------------------------------------------------------

// Where a hint or prefetch points. The location forms (cudaMemLocation,
// CUmemLocation) share numbers; the legacy forms take a device ordinal where
// cudaCpuDeviceId / CU_DEVICE_CPU (-1) means the host.
struct MemTarget {
  MemLocationType type;
  int32_t id;  // device ordinal or NUMA node, by type; -1 where the type takes none
};
MemTarget mem_target(int location_type, int location_id);
MemTarget legacy_mem_target(int device);

// cudaMemAdvise / cuMemAdvise; `advice` is a cudaMemoryAdvise / CUmem_advise value.
void emit_mem_advice(CallSite& call, int advice, uint64_t address, uint64_t bytes,
                     MemTarget target);
// cudaStreamAttachMemAsync / cuStreamAttachMemAsync (`bytes` 0: the whole allocation).
void emit_stream_attach(CallSite& call, uint64_t address, uint64_t bytes, unsigned int flags,
                        const void* stream);
// A prefetch is a memcpys row of kind prefetch from the range to itself, on
// the stream it was issued to.
void emit_prefetch(CallSite& call, uint64_t address, uint64_t bytes, MemTarget target,
                   const void* stream);

// The batch forms: `locations[k]` applies to the ranges from
// `first_indices[k]` up to the next entry's first index (or `count`).
template <typename Pointer, typename Location>
void emit_prefetch_batch(CallSite& call, const Pointer* pointers, const size_t* sizes,
                         size_t count, const Location* locations, const size_t* first_indices,
                         size_t location_count, const void* stream) {
  for (size_t k = 0; k < location_count; ++k) {
    MemTarget target = mem_target(locations[k].type, locations[k].id);
    size_t end = k + 1 < location_count ? first_indices[k + 1] : count;
    for (size_t i = first_indices[k]; i < end && i < count; ++i) {
      emit_prefetch(call, address_value(pointers[i]), sizes[i], target, stream);
    }
  }
}

}  // namespace apptracer
