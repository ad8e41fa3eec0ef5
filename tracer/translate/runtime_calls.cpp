// CUDA runtime calls -> records. A runtime call is described here only when
// no driver call nested inside it already described it (api_dispatch.cpp):
// the driver sees real device addresses (symbols, for instance), the runtime
// is the fallback for paths that reach the driver through untraced entries.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "translate/emit.h"
#include "translate/handlers.h"

namespace apptracer::runtime_calls {

namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

CopyKind copy_kind(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost: return CopyKind::HtoH;
    case cudaMemcpyHostToDevice: return CopyKind::HtoD;
    case cudaMemcpyDeviceToHost: return CopyKind::DtoH;
    case cudaMemcpyDeviceToDevice: return CopyKind::DtoD;
    default: return CopyKind::Unknown;  // cudaMemcpyDefault: decided from the addresses
  }
}

void copy_3d_parms(CallSite& call, const cudaMemcpy3DParms& p) {
  // Arrays have no linear address; their copies keep address 0 (unresolved).
  uint64_t src = addr(p.srcPtr.ptr) +
                 (p.srcPos.z * p.srcPtr.ysize + p.srcPos.y) * p.srcPtr.pitch + p.srcPos.x;
  uint64_t dst = addr(p.dstPtr.ptr) +
                 (p.dstPos.z * p.dstPtr.ysize + p.dstPos.y) * p.dstPtr.pitch + p.dstPos.x;
  uint64_t rows = p.extent.height * p.extent.depth;
  MemcpyRecord m = copy_record(p.dstPtr.ptr ? dst : 0, p.srcPtr.ptr ? src : 0,
                               p.extent.width * rows, copy_kind(p.kind), call.async());
  m.width = p.extent.width;
  m.height = rows;
  m.src_pitch = p.srcPtr.pitch;
  m.dst_pitch = p.dstPtr.pitch;
  emit_memcpy(call, m);
}

// The runtime's memsets set bytes: only the low byte of `value` counts.
void memset_bytes(CallSite& call, const void* ptr, int value, size_t width, size_t height,
                  size_t pitch) {
  emit_memset(call, addr(ptr), static_cast<uint32_t>(value) & 0xff, 1, width, height, pitch);
}

// Only the driver knows the parameter layout: a launch that reaches no traced
// driver call is recorded without its arguments.
void launch_function(CallSite& call, const void* func, dim3 grid, dim3 block, size_t shared,
            LaunchKind kind) {
  emit_kernel(call, func,
              launch_values({grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
                            static_cast<uint32_t>(shared)),
              kind, nullptr, nullptr);
}

// CUDA 12's device-ordinal forms, which programs built against it still call
// (CUPTI reports them by these ids). CUDA 13's headers dropped their parameter
// structs along with the functions.
struct LegacyMemAdviseParams {
  const void* devPtr;
  size_t count;
  cudaMemoryAdvise advice;
  int device;
};
struct LegacyPrefetchParams {
  const void* devPtr;
  size_t count;
  int dstDevice;
  cudaStream_t stream;
};

}  // namespace

void malloc_device(CallSite& call) {
  auto& p = call.params<cudaMalloc_v3020_params>();
  emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Device);
}

void malloc_pitch(CallSite& call) {
  auto& p = call.params<cudaMallocPitch_v3020_params>();
  emit_allocation(call, addr(*p.devPtr), *p.pitch * p.height, AllocKind::Device, 0, *p.pitch);
}

void malloc_3d(CallSite& call) {
  auto& p = call.params<cudaMalloc3D_v3020_params>();
  const cudaPitchedPtr& pitched = *p.pitchedDevPtr;
  emit_allocation(call, addr(pitched.ptr), pitched.pitch * p.extent.height * p.extent.depth,
                  AllocKind::Device, 0, pitched.pitch);
}

void malloc_host(CallSite& call) {
  auto& p = call.params<cudaMallocHost_v3020_params>();
  emit_allocation(call, addr(*p.ptr), p.size, AllocKind::PinnedHost);
}

void host_alloc(CallSite& call) {
  auto& p = call.params<cudaHostAlloc_v3020_params>();
  emit_allocation(call, addr(*p.pHost), p.size, pinned_host_kind(p.flags), p.flags);
}

void host_register(CallSite& call) {
  auto& p = call.params<cudaHostRegister_v4000_params>();
  emit_allocation(call, addr(p.ptr), p.size, AllocKind::RegisteredHost, p.flags);
}

void host_unregister(CallSite& call) {
  emit_free(call, addr(call.params<cudaHostUnregister_v4000_params>().ptr));
}

void malloc_managed(CallSite& call) {
  auto& p = call.params<cudaMallocManaged_v6000_params>();
  emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Managed, p.flags);
}

void malloc_async(CallSite& call) {
  auto& p = call.params<cudaMallocAsync_v11020_params>();
  call.name_stream(p.hStream);
  emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Pool);
}

void malloc_from_pool(CallSite& call) {
  auto& p = call.params<cudaMallocFromPoolAsync_v11020_params>();
  call.name_stream(p.stream);
  emit_allocation(call, addr(*p.ptr), p.size, AllocKind::Pool);
}

void free_device(CallSite& call) { emit_free(call, addr(call.params<cudaFree_v3020_params>().devPtr)); }

void free_host(CallSite& call) {
  emit_free(call, addr(call.params<cudaFreeHost_v3020_params>().ptr));
}

void free_async(CallSite& call) {
  auto& p = call.params<cudaFreeAsync_v11020_params>();
  call.name_stream(p.hStream);
  emit_free(call, addr(p.devPtr));
}

void ipc_open_mem_handle(CallSite& call) {
  auto& p = call.params<cudaIpcOpenMemHandle_v4010_params>();
  uint64_t address = addr(*p.devPtr);
  auto [base, bytes] = call.ctx.cuda.allocation_range(address);
  emit_allocation(call, address, base == address ? bytes : 0, AllocKind::IpcImport, p.flags);
}

void ipc_close_mem_handle(CallSite& call) {
  emit_free(call, addr(call.params<cudaIpcCloseMemHandle_v4010_params>().devPtr));
}

void copy_linear(CallSite& call) {
  auto& p = call.params<cudaMemcpy_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemcpyAsync_v3020_params>().stream);
  emit_memcpy(call, copy_record(addr(p.dst), addr(p.src), p.count, copy_kind(p.kind), call.async()));
}

void copy_2d(CallSite& call) {
  auto& p = call.params<cudaMemcpy2D_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemcpy2DAsync_v3020_params>().stream);
  MemcpyRecord m = copy_record(addr(p.dst), addr(p.src), p.width * p.height, copy_kind(p.kind),
                               call.async());
  m.width = p.width;
  m.height = p.height;
  m.dst_pitch = p.dpitch;
  m.src_pitch = p.spitch;
  emit_memcpy(call, m);
}

void copy_3d(CallSite& call) {
  if (call.async()) {
    auto& p = call.params<cudaMemcpy3DAsync_v3020_params>();
    call.name_stream(p.stream);
    copy_3d_parms(call, *p.p);
  } else {
    copy_3d_parms(call, *call.params<cudaMemcpy3D_v3020_params>().p);
  }
}

void copy_peer(CallSite& call) {
  auto& p = call.params<cudaMemcpyPeer_v4000_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemcpyPeerAsync_v4000_params>().stream);
  MemcpyRecord m = copy_record(addr(p.dst), addr(p.src), p.count, CopyKind::PtoP, call.async());
  m.src_device = p.srcDevice;
  m.dst_device = p.dstDevice;
  emit_memcpy(call, m);
}

// Symbol copies: `symbol` is the host shadow of a __device__ variable; the
// nested driver copy, when traced, reports the device address instead.
void copy_to_symbol(CallSite& call) {
  auto& p = call.params<cudaMemcpyToSymbol_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemcpyToSymbolAsync_v3020_params>().stream);
  emit_memcpy(call, copy_record(addr(p.symbol) + p.offset, addr(p.src), p.count,
                                copy_kind(p.kind), call.async()));
}

void copy_from_symbol(CallSite& call) {
  auto& p = call.params<cudaMemcpyFromSymbol_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemcpyFromSymbolAsync_v3020_params>().stream);
  emit_memcpy(call, copy_record(addr(p.dst), addr(p.symbol) + p.offset, p.count,
                                copy_kind(p.kind), call.async()));
}

void set_linear(CallSite& call) {
  auto& p = call.params<cudaMemset_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemsetAsync_v3020_params>().stream);
  memset_bytes(call, p.devPtr, p.value, p.count, 1, 0);
}

void set_2d(CallSite& call) {
  auto& p = call.params<cudaMemset2D_v3020_params>();  // Async adds a trailing stream
  if (call.async()) call.name_stream(call.params<cudaMemset2DAsync_v3020_params>().stream);
  memset_bytes(call, p.devPtr, p.value, p.width, p.height, p.pitch);
}

void launch(CallSite& call) {
  auto& p = call.params<cudaLaunchKernel_v7000_params>();
  call.name_stream(p.stream);
  launch_function(call, p.func, p.gridDim, p.blockDim, p.sharedMem, LaunchKind::Driver);
}

void launch_ex(CallSite& call) {
  auto& p = call.params<cudaLaunchKernelExC_v11060_params>();
  call.name_stream(p.config->stream);
  launch_function(call, p.func, p.config->gridDim, p.config->blockDim, p.config->dynamicSmemBytes,
         LaunchKind::DriverEx);
}

void launch_cooperative(CallSite& call) {
  auto& p = call.params<cudaLaunchCooperativeKernel_v9000_params>();
  call.name_stream(p.stream);
  launch_function(call, p.func, p.gridDim, p.blockDim, p.sharedMem, LaunchKind::Cooperative);
}

void device_synchronize(CallSite& call) { emit_sync(call, SyncKind::Device, nullptr, 0); }

void stream_synchronize(CallSite& call) {
  emit_sync(call, SyncKind::Stream, call.params<cudaStreamSynchronize_v3020_params>().stream, 0);
}

void event_synchronize(CallSite& call) {
  emit_sync(call, SyncKind::Event, nullptr,
            addr(call.params<cudaEventSynchronize_v3020_params>().event));
}

void event_record(CallSite& call) {
  auto& p = call.params<cudaEventRecord_v3020_params>();  // WithFlags adds trailing flags
  emit_stream_event(call, StreamEventKind::Record, p.event, p.stream);
}

void stream_wait_event(CallSite& call) {
  auto& p = call.params<cudaStreamWaitEvent_v3020_params>();
  emit_stream_event(call, StreamEventKind::Wait, p.event, p.stream);
}

void stream_destroy(CallSite& call) {
  call.ctx.cuda.forget_stream(call.params<cudaStreamDestroy_v5050_params>().stream);
}

// Unified memory. In a CUDA 13 runtime each of these reaches a traced driver
// call, which describes it; these are the fallback.
void mem_advise_legacy(CallSite& call) {
  auto& p = call.params<LegacyMemAdviseParams>();
  emit_mem_advice(call, p.advice, addr(p.devPtr), p.count, legacy_mem_target(p.device));
}

void mem_advise(CallSite& call) {
  auto& p = call.params<cudaMemAdvise_v12020_params>();
  emit_mem_advice(call, p.advice, addr(p.devPtr), p.count,
                  mem_target(p.location.type, p.location.id));
}

void prefetch_legacy(CallSite& call) {
  auto& p = call.params<LegacyPrefetchParams>();
  emit_prefetch(call, addr(p.devPtr), p.count, legacy_mem_target(p.dstDevice), p.stream);
}

void prefetch(CallSite& call) {
  auto& p = call.params<cudaMemPrefetchAsync_v12020_params>();
  emit_prefetch(call, addr(p.devPtr), p.count, mem_target(p.location.type, p.location.id),
                p.stream);
}

void prefetch_batch(CallSite& call) {
  auto& p = call.params<cudaMemPrefetchBatchAsync_v13000_params>();
  emit_prefetch_batch(call, p.dptrs, p.sizes, p.count, p.prefetchLocs, p.prefetchLocIdxs,
                      p.numPrefetchLocs, p.stream);
}

void stream_attach(CallSite& call) {
  auto& p = call.params<cudaStreamAttachMemAsync_v6000_params>();
  emit_stream_attach(call, addr(p.devPtr), p.length, p.flags, p.stream);
}

}  // namespace apptracer::runtime_calls
