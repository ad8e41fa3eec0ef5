// CUDA driver calls -> records. The driver sees every operation, whether the
// program called it directly (JAX, Triton, CuPy, cuBLAS) or through the
// runtime, so most operations are described here.
#include <cuda.h>
#include <cupti.h>

#include "emit.h"

namespace apptracer {

namespace {

#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

template <typename Params>
const Params& params(const CallSite& call) {
  return *static_cast<const Params*>(call.data->functionParams);
}

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

bool is_device_side(CUmemorytype type) {
  return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY;
}

CopyKind copy_kind(CUmemorytype src, CUmemorytype dst) {
  if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED) return CopyKind::Unknown;
  if (is_device_side(src)) return is_device_side(dst) ? CopyKind::DtoD : CopyKind::DtoH;
  return is_device_side(dst) ? CopyKind::HtoD : CopyKind::HtoH;
}

uint64_t endpoint(CUmemorytype type, const void* host, CUdeviceptr device) {
  if (type == CU_MEMORYTYPE_HOST) return addr(host);
  if (type == CU_MEMORYTYPE_ARRAY) return 0;  // arrays have no linear address
  return device;  // device or unified
}

template <typename Copy>
void copy_pitched(CallSite& call, const Copy& c, size_t rows, uint64_t src_offset,
                  uint64_t dst_offset, bool is_async) {
  uint64_t src = endpoint(c.srcMemoryType, c.srcHost, c.srcDevice);
  uint64_t dst = endpoint(c.dstMemoryType, c.dstHost, c.dstDevice);
  MemcpyRecord m = copy_record(dst ? dst + dst_offset : 0, src ? src + src_offset : 0,
                               c.WidthInBytes * rows, copy_kind(c.srcMemoryType, c.dstMemoryType),
                               is_async);
  m.width = c.WidthInBytes;
  m.height = rows;
  m.src_pitch = c.srcPitch;
  m.dst_pitch = c.dstPitch;
  emit_memcpy(call, m);
}

void copy_2d(CallSite& call, const CUDA_MEMCPY2D& c, bool is_async) {
  copy_pitched(call, c, c.Height, c.srcY * c.srcPitch + c.srcXInBytes,
               c.dstY * c.dstPitch + c.dstXInBytes, is_async);
}

void copy_3d(CallSite& call, const CUDA_MEMCPY3D& c, bool is_async) {
  copy_pitched(call, c, c.Height * c.Depth,
               (c.srcZ * c.srcHeight + c.srcY) * c.srcPitch + c.srcXInBytes,
               (c.dstZ * c.dstHeight + c.dstY) * c.dstPitch + c.dstXInBytes, is_async);
}

template <typename Launch>
void launch(CallSite& call, const Launch& p, LaunchKind kind, void** extra) {
  const uint32_t grid[3] = {p.gridDimX, p.gridDimY, p.gridDimZ};
  const uint32_t block[3] = {p.blockDimX, p.blockDimY, p.blockDimZ};
  emit_kernel(call, p.f, grid, block, p.sharedMemBytes, kind, p.kernelParams, extra);
}

bool is_ptsz(CUpti_CallbackId cbid) {
  switch (cbid) {
    case DRV(cuStreamSynchronize_ptsz):
    case DRV(cuEventRecord_ptsz):
    case DRV(cuEventRecordWithFlags_ptsz):
    case DRV(cuStreamWaitEvent_ptsz):
    case DRV(cuStreamAttachMemAsync_ptsz):
      return true;
    default:
      return false;
  }
}

MemTarget location_target(const CUmemLocation& location) {
  return mem_target(location.type, location.id);
}

}  // namespace

void translate_driver_call(CallSite& call, CUpti_CallbackId cbid) {
  switch (cbid) {
    case DRV(cuMemAlloc_v2): {
      auto& p = params<cuMemAlloc_v2_params>(call);
      emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Device);
      break;
    }
    case DRV(cuMemAllocPitch_v2): {
      auto& p = params<cuMemAllocPitch_v2_params>(call);
      emit_allocation(call, *p.dptr, *p.pPitch * p.Height, AllocKind::Device, 0, *p.pPitch);
      break;
    }
    case DRV(cuMemAllocHost_v2): {
      auto& p = params<cuMemAllocHost_v2_params>(call);
      emit_allocation(call, addr(*p.pp), p.bytesize, AllocKind::PinnedHost);
      break;
    }
    case DRV(cuMemHostAlloc): {
      auto& p = params<cuMemHostAlloc_params>(call);
      emit_allocation(call, addr(*p.pp), p.bytesize, pinned_host_kind(p.Flags), p.Flags);
      break;
    }
    case DRV(cuMemHostRegister_v2): {
      auto& p = params<cuMemHostRegister_v2_params>(call);
      emit_allocation(call, addr(p.p), p.bytesize, AllocKind::RegisteredHost, p.Flags);
      break;
    }
    case DRV(cuMemHostUnregister):
      emit_free(call, addr(params<cuMemHostUnregister_params>(call).p));
      break;
    case DRV(cuMemAllocManaged): {
      auto& p = params<cuMemAllocManaged_params>(call);
      emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Managed, p.flags);
      break;
    }
    case DRV(cuMemAllocAsync):
    case DRV(cuMemAllocAsync_ptsz): {
      auto& p = params<cuMemAllocAsync_params>(call);
      emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Pool);
      break;
    }
    case DRV(cuMemAllocFromPoolAsync):
    case DRV(cuMemAllocFromPoolAsync_ptsz): {
      auto& p = params<cuMemAllocFromPoolAsync_params>(call);
      emit_allocation(call, *p.dptr, p.bytesize, AllocKind::Pool);
      break;
    }
    case DRV(cuMemFree_v2):
      emit_free(call, params<cuMemFree_v2_params>(call).dptr);
      break;
    case DRV(cuMemFreeHost):
      emit_free(call, addr(params<cuMemFreeHost_params>(call).p));
      break;
    case DRV(cuMemFreeAsync):
    case DRV(cuMemFreeAsync_ptsz):
      emit_free(call, params<cuMemFreeAsync_params>(call).dptr);
      break;
    // Virtual memory (PyTorch's expandable segments): a reservation is address
    // space, a created handle is memory without an address, and a mapping puts
    // the one into the other; pointers resolve to mappings.
    case DRV(cuMemAddressReserve): {
      auto& p = params<cuMemAddressReserve_params>(call);
      emit_unresolvable_allocation(call, AllocKind::VmmReserve, *p.ptr, *p.ptr, p.size,
                                   static_cast<uint32_t>(p.flags));
      break;
    }
    case DRV(cuMemAddressFree):
      emit_unresolvable_free(call, AllocKind::VmmReserve, params<cuMemAddressFree_params>(call).ptr);
      break;
    case DRV(cuMemCreate): {
      auto& p = params<cuMemCreate_params>(call);
      emit_unresolvable_allocation(call, AllocKind::VmmPhysical, *p.handle, 0, p.size,
                                   static_cast<uint32_t>(p.flags));
      break;
    }
    case DRV(cuMemRelease):
      emit_unresolvable_free(call, AllocKind::VmmPhysical, params<cuMemRelease_params>(call).handle);
      break;
    case DRV(cuMemMap): {
      auto& p = params<cuMemMap_params>(call);
      emit_allocation(call, p.ptr, p.size, AllocKind::VmmMapping, static_cast<uint32_t>(p.flags));
      break;
    }
    case DRV(cuMemUnmap):
      emit_free(call, params<cuMemUnmap_params>(call).ptr);
      break;
    case DRV(cuMemcpy):
    case DRV(cuMemcpy_ptds): {
      auto& p = params<cuMemcpy_params>(call);
      emit_memcpy(call, copy_record(p.dst, p.src, p.ByteCount, CopyKind::Unknown, false));
      break;
    }
    case DRV(cuMemcpyAsync):
    case DRV(cuMemcpyAsync_ptsz): {
      auto& p = params<cuMemcpyAsync_params>(call);
      emit_memcpy(call, copy_record(p.dst, p.src, p.ByteCount, CopyKind::Unknown, true));
      break;
    }
    case DRV(cuMemcpyHtoD_v2):
    case DRV(cuMemcpyHtoD_v2_ptds):
    case DRV(cuMemcpyHtoDAsync_v2):
    case DRV(cuMemcpyHtoDAsync_v2_ptsz): {
      auto& p = params<cuMemcpyHtoD_v2_params>(call);
      bool async = cbid == DRV(cuMemcpyHtoDAsync_v2) || cbid == DRV(cuMemcpyHtoDAsync_v2_ptsz);
      emit_memcpy(call, copy_record(p.dstDevice, addr(p.srcHost), p.ByteCount, CopyKind::HtoD, async));
      break;
    }
    case DRV(cuMemcpyDtoH_v2):
    case DRV(cuMemcpyDtoH_v2_ptds):
    case DRV(cuMemcpyDtoHAsync_v2):
    case DRV(cuMemcpyDtoHAsync_v2_ptsz): {
      auto& p = params<cuMemcpyDtoH_v2_params>(call);
      bool async = cbid == DRV(cuMemcpyDtoHAsync_v2) || cbid == DRV(cuMemcpyDtoHAsync_v2_ptsz);
      emit_memcpy(call, copy_record(addr(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::DtoH, async));
      break;
    }
    case DRV(cuMemcpyDtoD_v2):
    case DRV(cuMemcpyDtoD_v2_ptds):
    case DRV(cuMemcpyDtoDAsync_v2):
    case DRV(cuMemcpyDtoDAsync_v2_ptsz): {
      auto& p = params<cuMemcpyDtoD_v2_params>(call);
      bool async = cbid == DRV(cuMemcpyDtoDAsync_v2) || cbid == DRV(cuMemcpyDtoDAsync_v2_ptsz);
      emit_memcpy(call, copy_record(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::DtoD, async));
      break;
    }
    case DRV(cuMemcpy2D_v2):
    case DRV(cuMemcpy2D_v2_ptds):
    case DRV(cuMemcpy2DUnaligned_v2):
    case DRV(cuMemcpy2DUnaligned_v2_ptds):
      copy_2d(call, *params<cuMemcpy2D_v2_params>(call).pCopy, false);
      break;
    case DRV(cuMemcpy2DAsync_v2):
    case DRV(cuMemcpy2DAsync_v2_ptsz):
      copy_2d(call, *params<cuMemcpy2DAsync_v2_params>(call).pCopy, true);
      break;
    case DRV(cuMemcpy3D_v2):
    case DRV(cuMemcpy3D_v2_ptds):
      copy_3d(call, *params<cuMemcpy3D_v2_params>(call).pCopy, false);
      break;
    case DRV(cuMemcpy3DAsync_v2):
    case DRV(cuMemcpy3DAsync_v2_ptsz):
      copy_3d(call, *params<cuMemcpy3DAsync_v2_params>(call).pCopy, true);
      break;
    case DRV(cuMemcpyPeer):
    case DRV(cuMemcpyPeer_ptds):
    case DRV(cuMemcpyPeerAsync):
    case DRV(cuMemcpyPeerAsync_ptsz): {
      auto& p = params<cuMemcpyPeer_params>(call);
      bool async = cbid == DRV(cuMemcpyPeerAsync) || cbid == DRV(cuMemcpyPeerAsync_ptsz);
      emit_memcpy(call, copy_record(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::PtoP, async));
      break;
    }
    case DRV(cuMemsetD8_v2):
    case DRV(cuMemsetD8_v2_ptds):
    case DRV(cuMemsetD8Async):
    case DRV(cuMemsetD8Async_ptsz): {
      auto& p = params<cuMemsetD8_v2_params>(call);
      emit_memset(call, p.dstDevice, p.uc, 1, p.N, 1, 0,
                    cbid == DRV(cuMemsetD8Async) || cbid == DRV(cuMemsetD8Async_ptsz));
      break;
    }
    case DRV(cuMemsetD16_v2):
    case DRV(cuMemsetD16_v2_ptds):
    case DRV(cuMemsetD16Async):
    case DRV(cuMemsetD16Async_ptsz): {
      auto& p = params<cuMemsetD16_v2_params>(call);
      emit_memset(call, p.dstDevice, p.us, 2, p.N, 1, 0,
                    cbid == DRV(cuMemsetD16Async) || cbid == DRV(cuMemsetD16Async_ptsz));
      break;
    }
    case DRV(cuMemsetD32_v2):
    case DRV(cuMemsetD32_v2_ptds):
    case DRV(cuMemsetD32Async):
    case DRV(cuMemsetD32Async_ptsz): {
      auto& p = params<cuMemsetD32_v2_params>(call);
      emit_memset(call, p.dstDevice, p.ui, 4, p.N, 1, 0,
                    cbid == DRV(cuMemsetD32Async) || cbid == DRV(cuMemsetD32Async_ptsz));
      break;
    }
    case DRV(cuMemsetD2D8_v2):
    case DRV(cuMemsetD2D8_v2_ptds):
    case DRV(cuMemsetD2D8Async):
    case DRV(cuMemsetD2D8Async_ptsz): {
      auto& p = params<cuMemsetD2D8_v2_params>(call);
      emit_memset(call, p.dstDevice, p.uc, 1, p.Width, p.Height, p.dstPitch,
                  cbid == DRV(cuMemsetD2D8Async) || cbid == DRV(cuMemsetD2D8Async_ptsz));
      break;
    }
    case DRV(cuMemsetD2D16_v2):
    case DRV(cuMemsetD2D16_v2_ptds):
    case DRV(cuMemsetD2D16Async):
    case DRV(cuMemsetD2D16Async_ptsz): {
      auto& p = params<cuMemsetD2D16_v2_params>(call);
      emit_memset(call, p.dstDevice, p.us, 2, p.Width, p.Height, p.dstPitch,
                  cbid == DRV(cuMemsetD2D16Async) || cbid == DRV(cuMemsetD2D16Async_ptsz));
      break;
    }
    case DRV(cuMemsetD2D32_v2):
    case DRV(cuMemsetD2D32_v2_ptds):
    case DRV(cuMemsetD2D32Async):
    case DRV(cuMemsetD2D32Async_ptsz): {
      auto& p = params<cuMemsetD2D32_v2_params>(call);
      emit_memset(call, p.dstDevice, p.ui, 4, p.Width, p.Height, p.dstPitch,
                  cbid == DRV(cuMemsetD2D32Async) || cbid == DRV(cuMemsetD2D32Async_ptsz));
      break;
    }
    case DRV(cuLaunchKernel):
    case DRV(cuLaunchKernel_ptsz): {
      auto& p = params<cuLaunchKernel_params>(call);
      launch(call, p, LaunchKind::Driver, p.extra);
      break;
    }
    case DRV(cuLaunchCooperativeKernel):
    case DRV(cuLaunchCooperativeKernel_ptsz):
      launch(call, params<cuLaunchCooperativeKernel_params>(call), LaunchKind::Cooperative, nullptr);
      break;
    case DRV(cuLaunchKernelEx):
    case DRV(cuLaunchKernelEx_ptsz): {
      auto& p = params<cuLaunchKernelEx_params>(call);
      const CUlaunchConfig& c = *p.config;
      const uint32_t grid[3] = {c.gridDimX, c.gridDimY, c.gridDimZ};
      const uint32_t block[3] = {c.blockDimX, c.blockDimY, c.blockDimZ};
      LaunchKind kind = LaunchKind::DriverEx;
      for (unsigned i = 0; i < c.numAttrs; ++i) {
        if (c.attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c.attrs[i].value.cooperative) {
          kind = LaunchKind::Cooperative;
        }
      }
      emit_kernel(call, p.f, grid, block, c.sharedMemBytes, kind, p.kernelParams, p.extra);
      break;
    }
    case DRV(cuCtxSynchronize):
      emit_sync(call, SyncKind::Context, nullptr, 0, false);
      break;
    case DRV(cuStreamSynchronize):
    case DRV(cuStreamSynchronize_ptsz):
      emit_sync(call, SyncKind::Stream, params<cuStreamSynchronize_params>(call).hStream, 0,
                is_ptsz(cbid));
      break;
    case DRV(cuEventSynchronize):
      emit_sync(call, SyncKind::Event, nullptr, addr(params<cuEventSynchronize_params>(call).hEvent),
                false);
      break;
    case DRV(cuEventRecord):
    case DRV(cuEventRecord_ptsz):
    case DRV(cuEventRecordWithFlags):
    case DRV(cuEventRecordWithFlags_ptsz): {
      auto& p = params<cuEventRecord_params>(call);  // WithFlags adds trailing flags
      emit_stream_event(call, StreamEventKind::Record, p.hEvent, p.hStream, is_ptsz(cbid));
      break;
    }
    case DRV(cuStreamWaitEvent):
    case DRV(cuStreamWaitEvent_ptsz): {
      auto& p = params<cuStreamWaitEvent_params>(call);
      emit_stream_event(call, StreamEventKind::Wait, p.hEvent, p.hStream, is_ptsz(cbid));
      break;
    }
    // Unified memory: hints, prefetches and stream attachments.
    case DRV(cuMemAdvise): {
      auto& p = params<cuMemAdvise_params>(call);
      emit_mem_advice(call, p.advice, p.devPtr, p.count, legacy_mem_target(p.device));
      break;
    }
    case DRV(cuMemAdvise_v2): {
      auto& p = params<cuMemAdvise_v2_params>(call);
      emit_mem_advice(call, p.advice, p.devPtr, p.count, location_target(p.location));
      break;
    }
    case DRV(cuMemPrefetchAsync):
    case DRV(cuMemPrefetchAsync_ptsz): {
      auto& p = params<cuMemPrefetchAsync_params>(call);
      emit_prefetch(call, p.devPtr, p.count, legacy_mem_target(p.dstDevice), {p.hStream, is_ptsz(cbid)});
      break;
    }
    case DRV(cuMemPrefetchAsync_v2):
    case DRV(cuMemPrefetchAsync_v2_ptsz): {
      auto& p = params<cuMemPrefetchAsync_v2_params>(call);
      emit_prefetch(call, p.devPtr, p.count, location_target(p.location), {p.hStream, is_ptsz(cbid)});
      break;
    }
    case DRV(cuMemPrefetchBatchAsync):
    case DRV(cuMemPrefetchBatchAsync_ptsz): {
      auto& p = params<cuMemPrefetchBatchAsync_params>(call);
      emit_prefetch_batch(call, p.dptrs, p.sizes, p.count, p.prefetchLocs, p.prefetchLocIdxs,
                          p.numPrefetchLocs, {p.hStream, is_ptsz(cbid)});
      break;
    }
    case DRV(cuStreamAttachMemAsync):
    case DRV(cuStreamAttachMemAsync_ptsz): {
      auto& p = params<cuStreamAttachMemAsync_params>(call);
      emit_stream_attach(call, p.dptr, p.length, p.flags, p.hStream, is_ptsz(cbid));
      break;
    }
    default:
      break;  // recorded as an API call only (graph launches)
  }
}

}  // namespace apptracer
