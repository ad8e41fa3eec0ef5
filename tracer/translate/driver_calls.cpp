// CUDA driver calls -> records. The driver sees every operation, whether the
// program called it directly (JAX, Triton, CuPy, cuBLAS) or through the
// runtime, so most operations are described here.
#include <cuda.h>
#include <cupti.h>

#include "translate/emit.h"
#include "translate/handlers.h"

namespace apptracer::driver_calls {

namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

template <typename Copy>
void copy_pitched(CallSite& call, const Copy& c, size_t rows, uint64_t src_offset,
                  uint64_t dst_offset) {
  uint64_t src = copy_endpoint(c.srcMemoryType, c.srcHost, c.srcDevice);
  uint64_t dst = copy_endpoint(c.dstMemoryType, c.dstHost, c.dstDevice);
  MemcpyRecord m = copy_record(dst ? dst + dst_offset : 0, src ? src + src_offset : 0,
                               c.WidthInBytes * rows, copy_kind(c.srcMemoryType, c.dstMemoryType),
                               call.async());
  m.width = c.WidthInBytes;
  m.height = rows;
  m.src_pitch = c.srcPitch;
  m.dst_pitch = c.dstPitch;
  emit_memcpy(call, m);
}

template <typename Launch>
void launch(CallSite& call, const Launch& p, LaunchKind kind, void** extra) {
  call.name_stream(p.hStream);
  LaunchValues launch = launch_values({p.gridDimX, p.gridDimY, p.gridDimZ},
                                      {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes);
  emit_kernel(call, p.f, launch, kind, p.kernelParams, extra);
}

// The async forms' parameter structs extend the synchronous ones with a
// trailing stream: read the prefix from `Sync`, the stream from `Async`.
template <typename Async>
void name_async_stream(CallSite& call) {
  if (call.async()) call.name_stream(call.params<Async>().hStream);
}

// Memsets: the value's member is named by its width (uc, us, ui).
template <typename Params, typename AsyncParams, typename Value>
void set_1d(CallSite& call, Value Params::*value) {
  auto& p = call.params<Params>();
  name_async_stream<AsyncParams>(call);
  emit_memset(call, p.dstDevice, p.*value, sizeof(Value), p.N, 1, 0);
}

template <typename Params, typename AsyncParams, typename Value>
void set_2d(CallSite& call, Value Params::*value) {
  auto& p = call.params<Params>();
  name_async_stream<AsyncParams>(call);
  emit_memset(call, p.dstDevice, p.*value, sizeof(Value), p.Width, p.Height, p.dstPitch);
}

}  // namespace

void mem_alloc(CallSite& call) {
  auto& p = call.params<cuMemAlloc_v2_params>();
  emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Device);
}

void mem_alloc_pitch(CallSite& call) {
  auto& p = call.params<cuMemAllocPitch_v2_params>();
  emit_allocation(call, *p.dptr, *p.pPitch * p.Height, AllocKind::Device, 0, *p.pPitch);
}

void mem_alloc_host(CallSite& call) {
  auto& p = call.params<cuMemAllocHost_v2_params>();
  emit_allocation(call, addr(*p.pp), p.bytesize, AllocKind::PinnedHost);
}

void mem_host_alloc(CallSite& call) {
  auto& p = call.params<cuMemHostAlloc_params>();
  emit_allocation(call, addr(*p.pp), p.bytesize, pinned_host_kind(p.Flags), p.Flags);
}

void mem_host_register(CallSite& call) {
  auto& p = call.params<cuMemHostRegister_v2_params>();
  emit_allocation(call, addr(p.p), p.bytesize, AllocKind::RegisteredHost, p.Flags);
}

void mem_host_unregister(CallSite& call) {
  emit_free(call, addr(call.params<cuMemHostUnregister_params>().p));
}

void mem_alloc_managed(CallSite& call) {
  auto& p = call.params<cuMemAllocManaged_params>();
  emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Managed, p.flags);
}

void mem_alloc_async(CallSite& call) {
  auto& p = call.params<cuMemAllocAsync_params>();
  call.name_stream(p.hStream);
  emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Pool);
}

void mem_alloc_from_pool(CallSite& call) {
  auto& p = call.params<cuMemAllocFromPoolAsync_params>();
  call.name_stream(p.hStream);
  emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Pool);
}

void mem_free(CallSite& call) { emit_free(call, call.params<cuMemFree_v2_params>().dptr); }

void mem_free_host(CallSite& call) { emit_free(call, addr(call.params<cuMemFreeHost_params>().p)); }

void mem_free_async(CallSite& call) {
  auto& p = call.params<cuMemFreeAsync_params>();
  call.name_stream(p.hStream);
  emit_free(call, p.dptr);
}

void mem_address_reserve(CallSite& call) {
  auto& p = call.params<cuMemAddressReserve_params>();
  emit_unresolvable_allocation(call, AllocKind::VmmReserve, *p.ptr, *p.ptr, p.size,
                               static_cast<uint32_t>(p.flags));
}

void mem_address_free(CallSite& call) {
  emit_unresolvable_free(call, AllocKind::VmmReserve, call.params<cuMemAddressFree_params>().ptr);
}

void mem_create(CallSite& call) {
  auto& p = call.params<cuMemCreate_params>();
  emit_unresolvable_allocation(call, AllocKind::VmmPhysical, *p.handle, 0, p.size,
                               static_cast<uint32_t>(p.flags));
}

// A handle released here was created here or imported from another process.
void mem_release(CallSite& call) {
  uint64_t handle = call.params<cuMemRelease_params>().handle;
  if (!emit_unresolvable_free(call, AllocKind::VmmPhysical, handle)) {
    emit_unresolvable_free(call, AllocKind::ImportedHandle, handle);
  }
}

void mem_map(CallSite& call) {
  auto& p = call.params<cuMemMap_params>();
  emit_allocation(call, p.ptr, p.size, AllocKind::VmmMapping, static_cast<uint32_t>(p.flags));
}

void mem_unmap(CallSite& call) { emit_free(call, call.params<cuMemUnmap_params>().ptr); }

// The open call does not say how much was mapped: the driver does.
void ipc_open_mem_handle(CallSite& call) {
  auto& p = call.params<cuIpcOpenMemHandle_v2_params>();
  auto [base, bytes] = call.ctx.cuda.allocation_range(*p.pdptr);
  emit_allocation(call, *p.pdptr, base == *p.pdptr ? bytes : 0, AllocKind::IpcImport, p.Flags);
}

void ipc_close_mem_handle(CallSite& call) {
  emit_free(call, call.params<cuIpcCloseMemHandle_params>().dptr);
}

// Physical memory another process exported; it gets addresses by cuMemMap.
void mem_import(CallSite& call) {
  auto& p = call.params<cuMemImportFromShareableHandle_params>();
  emit_unresolvable_allocation(call, AllocKind::ImportedHandle, *p.handle, 0, 0,
                               static_cast<uint32_t>(p.shHandleType));
}

void copy_linear(CallSite& call) {
  auto& p = call.params<cuMemcpy_params>();
  name_async_stream<cuMemcpyAsync_params>(call);
  emit_memcpy(call, copy_record(p.dst, p.src, p.ByteCount, CopyKind::Unknown, call.async()));
}

void copy_htod(CallSite& call) {
  auto& p = call.params<cuMemcpyHtoD_v2_params>();
  name_async_stream<cuMemcpyHtoDAsync_v2_params>(call);
  emit_memcpy(call, copy_record(p.dstDevice, addr(p.srcHost), p.ByteCount, CopyKind::HtoD,
                                call.async()));
}

void copy_dtoh(CallSite& call) {
  auto& p = call.params<cuMemcpyDtoH_v2_params>();
  name_async_stream<cuMemcpyDtoHAsync_v2_params>(call);
  emit_memcpy(call, copy_record(addr(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::DtoH,
                                call.async()));
}

void copy_dtod(CallSite& call) {
  auto& p = call.params<cuMemcpyDtoD_v2_params>();
  name_async_stream<cuMemcpyDtoDAsync_v2_params>(call);
  emit_memcpy(call, copy_record(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::DtoD,
                                call.async()));
}

void copy_2d(CallSite& call) {
  const CUDA_MEMCPY2D& c = *call.params<cuMemcpy2D_v2_params>().pCopy;
  name_async_stream<cuMemcpy2DAsync_v2_params>(call);
  copy_pitched(call, c, c.Height, c.srcY * c.srcPitch + c.srcXInBytes,
               c.dstY * c.dstPitch + c.dstXInBytes);
}

void copy_3d(CallSite& call) {
  const CUDA_MEMCPY3D& c = *call.params<cuMemcpy3D_v2_params>().pCopy;
  name_async_stream<cuMemcpy3DAsync_v2_params>(call);
  copy_pitched(call, c, c.Height * c.Depth,
               (c.srcZ * c.srcHeight + c.srcY) * c.srcPitch + c.srcXInBytes,
               (c.dstZ * c.dstHeight + c.dstY) * c.dstPitch + c.dstXInBytes);
}

void copy_peer(CallSite& call) {
  auto& p = call.params<cuMemcpyPeer_params>();
  name_async_stream<cuMemcpyPeerAsync_params>(call);
  emit_memcpy(call, copy_record(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::PtoP,
                                call.async()));
}

void set_d8(CallSite& call) {
  set_1d<cuMemsetD8_v2_params, cuMemsetD8Async_params>(call, &cuMemsetD8_v2_params::uc);
}
void set_d16(CallSite& call) {
  set_1d<cuMemsetD16_v2_params, cuMemsetD16Async_params>(call, &cuMemsetD16_v2_params::us);
}
void set_d32(CallSite& call) {
  set_1d<cuMemsetD32_v2_params, cuMemsetD32Async_params>(call, &cuMemsetD32_v2_params::ui);
}
void set_d2d8(CallSite& call) {
  set_2d<cuMemsetD2D8_v2_params, cuMemsetD2D8Async_params>(call, &cuMemsetD2D8_v2_params::uc);
}
void set_d2d16(CallSite& call) {
  set_2d<cuMemsetD2D16_v2_params, cuMemsetD2D16Async_params>(call, &cuMemsetD2D16_v2_params::us);
}
void set_d2d32(CallSite& call) {
  set_2d<cuMemsetD2D32_v2_params, cuMemsetD2D32Async_params>(call, &cuMemsetD2D32_v2_params::ui);
}

void launch_kernel(CallSite& call) {
  auto& p = call.params<cuLaunchKernel_params>();
  launch(call, p, LaunchKind::Driver, p.extra);
}

void launch_cooperative(CallSite& call) {
  launch(call, call.params<cuLaunchCooperativeKernel_params>(), LaunchKind::Cooperative, nullptr);
}

void launch_kernel_ex(CallSite& call) {
  auto& p = call.params<cuLaunchKernelEx_params>();
  const CUlaunchConfig& c = *p.config;
  call.name_stream(c.hStream);
  LaunchKind kind = LaunchKind::DriverEx;
  for (unsigned i = 0; i < c.numAttrs; ++i) {
    if (c.attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c.attrs[i].value.cooperative) {
      kind = LaunchKind::Cooperative;
    }
  }
  LaunchValues launch = launch_values({c.gridDimX, c.gridDimY, c.gridDimZ},
                                      {c.blockDimX, c.blockDimY, c.blockDimZ}, c.sharedMemBytes);
  emit_kernel(call, p.f, launch, kind, p.kernelParams, p.extra);
}

void ctx_synchronize(CallSite& call) { emit_sync(call, SyncKind::Context, nullptr, 0); }

void stream_synchronize(CallSite& call) {
  emit_sync(call, SyncKind::Stream, call.params<cuStreamSynchronize_params>().hStream, 0);
}

void event_synchronize(CallSite& call) {
  emit_sync(call, SyncKind::Event, nullptr, addr(call.params<cuEventSynchronize_params>().hEvent));
}

void event_record(CallSite& call) {
  auto& p = call.params<cuEventRecord_params>();  // WithFlags adds trailing flags
  emit_stream_event(call, StreamEventKind::Record, p.hEvent, p.hStream);
}

void stream_wait_event(CallSite& call) {
  auto& p = call.params<cuStreamWaitEvent_params>();
  emit_stream_event(call, StreamEventKind::Wait, p.hEvent, p.hStream);
}

void stream_destroy(CallSite& call) {
  call.ctx.cuda.forget_stream(call.params<cuStreamDestroy_v2_params>().hStream);
}

void mem_advise_legacy(CallSite& call) {
  auto& p = call.params<cuMemAdvise_params>();
  emit_mem_advice(call, p.advice, p.devPtr, p.count, legacy_mem_target(p.device));
}

void mem_advise(CallSite& call) {
  auto& p = call.params<cuMemAdvise_v2_params>();
  emit_mem_advice(call, p.advice, p.devPtr, p.count, mem_target(p.location.type, p.location.id));
}

void prefetch_legacy(CallSite& call) {
  auto& p = call.params<cuMemPrefetchAsync_params>();
  emit_prefetch(call, p.devPtr, p.count, legacy_mem_target(p.dstDevice), p.hStream);
}

void prefetch(CallSite& call) {
  auto& p = call.params<cuMemPrefetchAsync_v2_params>();
  emit_prefetch(call, p.devPtr, p.count, mem_target(p.location.type, p.location.id), p.hStream);
}

void prefetch_batch(CallSite& call) {
  auto& p = call.params<cuMemPrefetchBatchAsync_params>();
  emit_prefetch_batch(call, p.dptrs, p.sizes, p.count, p.prefetchLocs, p.prefetchLocIdxs,
                      p.numPrefetchLocs, p.hStream);
}

void stream_attach(CallSite& call) {
  auto& p = call.params<cuStreamAttachMemAsync_params>();
  emit_stream_attach(call, p.dptr, p.length, p.flags, p.hStream);
}

}  // namespace apptracer::driver_calls
