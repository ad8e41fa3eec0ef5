// CUDA runtime calls -> records. A runtime call is described here only when
// no driver call nested inside it already described it (see callbacks.cpp):
// the driver sees real device addresses (symbols, for instance), the runtime
// is the fallback for paths that reach the driver through untraced entries.
#include <cupti.h>
#include <cuda_runtime_api.h>

#include "emit.h"

namespace apptracer {

namespace {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name

template <typename Params>
const Params& params(const CallSite& call) {
  return *static_cast<const Params*>(call.data->functionParams);
}

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

MemcpyRecord linear_copy(const void* dst, const void* src, size_t bytes, CopyKind kind,
                         bool is_async) {
  return copy_record(addr(dst), addr(src), bytes, kind, is_async);
}

MemcpyRecord copy_2d(const void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                     size_t height, cudaMemcpyKind kind, bool is_async) {
  MemcpyRecord m = linear_copy(dst, src, width * height, copy_kind(kind), is_async);
  m.width = width;
  m.height = height;
  m.dst_pitch = dpitch;
  m.src_pitch = spitch;
  return m;
}

void copy_3d(CallSite& call, const cudaMemcpy3DParms& p, bool is_async) {
  // Arrays have no linear address; their copies keep address 0 (unresolved).
  uint64_t src = addr(p.srcPtr.ptr) +
                 (p.srcPos.z * p.srcPtr.ysize + p.srcPos.y) * p.srcPtr.pitch + p.srcPos.x;
  uint64_t dst = addr(p.dstPtr.ptr) +
                 (p.dstPos.z * p.dstPtr.ysize + p.dstPos.y) * p.dstPtr.pitch + p.dstPos.x;
  uint64_t rows = p.extent.height * p.extent.depth;
  MemcpyRecord m = copy_record(p.dstPtr.ptr ? dst : 0, p.srcPtr.ptr ? src : 0,
                               p.extent.width * rows, copy_kind(p.kind), is_async);
  m.width = p.extent.width;
  m.height = rows;
  m.src_pitch = p.srcPtr.pitch;
  m.dst_pitch = p.dstPtr.pitch;
  emit_memcpy(call, m);
}

// The runtime's memsets set bytes: only the low byte of `value` counts.
void memset_bytes(CallSite& call, const void* ptr, int value, size_t width, size_t height,
                  size_t pitch, bool is_async) {
  emit_memset(call, addr(ptr), static_cast<uint32_t>(value) & 0xff, 1, width, height, pitch,
              is_async);
}

void launch(CallSite& call, const void* func, dim3 grid, dim3 block, size_t shared,
            LaunchKind kind) {
  const uint32_t g[3] = {grid.x, grid.y, grid.z};
  const uint32_t b[3] = {block.x, block.y, block.z};
  // Only the driver knows the parameter layout: a launch that reaches no
  // traced driver call is recorded without its arguments.
  emit_kernel(call, func, g, b, static_cast<uint32_t>(shared), kind, nullptr, nullptr);
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

MemTarget location_target(const cudaMemLocation& location) {
  return mem_target(location.type, location.id);
}

}  // namespace

void translate_runtime_call(CallSite& call, CUpti_CallbackId cbid) {
  switch (cbid) {
    case RT(cudaMalloc_v3020): {
      auto& p = params<cudaMalloc_v3020_params>(call);
      emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Device);
      break;
    }
    case RT(cudaMallocPitch_v3020): {
      auto& p = params<cudaMallocPitch_v3020_params>(call);
      emit_allocation(call, addr(*p.devPtr), *p.pitch * p.height, AllocKind::Device, 0, *p.pitch);
      break;
    }
    case RT(cudaMalloc3D_v3020): {
      auto& p = params<cudaMalloc3D_v3020_params>(call);
      const cudaPitchedPtr& pitched = *p.pitchedDevPtr;
      emit_allocation(call, addr(pitched.ptr), pitched.pitch * p.extent.height * p.extent.depth,
                      AllocKind::Device, 0, pitched.pitch);
      break;
    }
    case RT(cudaMallocHost_v3020): {
      auto& p = params<cudaMallocHost_v3020_params>(call);
      emit_allocation(call, addr(*p.ptr), p.size, AllocKind::PinnedHost);
      break;
    }
    case RT(cudaHostAlloc_v3020): {
      auto& p = params<cudaHostAlloc_v3020_params>(call);
      emit_allocation(call, addr(*p.pHost), p.size, pinned_host_kind(p.flags), p.flags);
      break;
    }
    case RT(cudaHostRegister_v4000): {
      auto& p = params<cudaHostRegister_v4000_params>(call);
      emit_allocation(call, addr(p.ptr), p.size, AllocKind::RegisteredHost, p.flags);
      break;
    }
    case RT(cudaHostUnregister_v4000):
      emit_free(call, addr(params<cudaHostUnregister_v4000_params>(call).ptr));
      break;
    case RT(cudaMallocManaged_v6000): {
      auto& p = params<cudaMallocManaged_v6000_params>(call);
      emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Managed, p.flags);
      break;
    }
    case RT(cudaMallocAsync_v11020):
    case RT(cudaMallocAsync_ptsz_v11020): {
      auto& p = params<cudaMallocAsync_v11020_params>(call);
      emit_allocation(call, addr(*p.devPtr), p.size, AllocKind::Pool);
      break;
    }
    case RT(cudaMallocFromPoolAsync_v11020):
    case RT(cudaMallocFromPoolAsync_ptsz_v11020): {
      auto& p = params<cudaMallocFromPoolAsync_v11020_params>(call);
      emit_allocation(call, addr(*p.ptr), p.size, AllocKind::Pool);
      break;
    }
    case RT(cudaFree_v3020):
      emit_free(call, addr(params<cudaFree_v3020_params>(call).devPtr));
      break;
    case RT(cudaFreeHost_v3020):
      emit_free(call, addr(params<cudaFreeHost_v3020_params>(call).ptr));
      break;
    case RT(cudaFreeAsync_v11020):
    case RT(cudaFreeAsync_ptsz_v11020):
      emit_free(call, addr(params<cudaFreeAsync_v11020_params>(call).devPtr));
      break;
    case RT(cudaMemcpy_v3020):
    case RT(cudaMemcpy_ptds_v7000): {
      auto& p = params<cudaMemcpy_v3020_params>(call);
      emit_memcpy(call, linear_copy(p.dst, p.src, p.count, copy_kind(p.kind), false));
      break;
    }
    case RT(cudaMemcpyAsync_v3020):
    case RT(cudaMemcpyAsync_ptsz_v7000): {
      auto& p = params<cudaMemcpyAsync_v3020_params>(call);
      emit_memcpy(call, linear_copy(p.dst, p.src, p.count, copy_kind(p.kind), true));
      break;
    }
    case RT(cudaMemcpy2D_v3020):
    case RT(cudaMemcpy2D_ptds_v7000): {
      auto& p = params<cudaMemcpy2D_v3020_params>(call);
      emit_memcpy(call, copy_2d(p.dst, p.dpitch, p.src, p.spitch, p.width, p.height, p.kind, false));
      break;
    }
    case RT(cudaMemcpy2DAsync_v3020):
    case RT(cudaMemcpy2DAsync_ptsz_v7000): {
      auto& p = params<cudaMemcpy2DAsync_v3020_params>(call);
      emit_memcpy(call, copy_2d(p.dst, p.dpitch, p.src, p.spitch, p.width, p.height, p.kind, true));
      break;
    }
    case RT(cudaMemcpy3D_v3020):
    case RT(cudaMemcpy3D_ptds_v7000):
      copy_3d(call, *params<cudaMemcpy3D_v3020_params>(call).p, false);
      break;
    case RT(cudaMemcpy3DAsync_v3020):
    case RT(cudaMemcpy3DAsync_ptsz_v7000):
      copy_3d(call, *params<cudaMemcpy3DAsync_v3020_params>(call).p, true);
      break;
    case RT(cudaMemcpyPeer_v4000):
    case RT(cudaMemcpyPeerAsync_v4000): {
      auto& p = params<cudaMemcpyPeer_v4000_params>(call);  // Async adds a trailing stream
      MemcpyRecord m = linear_copy(p.dst, p.src, p.count, CopyKind::PtoP,
                                   cbid == RT(cudaMemcpyPeerAsync_v4000));
      m.src_device = p.srcDevice;
      m.dst_device = p.dstDevice;
      emit_memcpy(call, m);
      break;
    }
    // Symbol copies: `symbol` is the host shadow of a __device__ variable; the
    // nested driver copy, when traced, reports the device address instead.
    case RT(cudaMemcpyToSymbol_v3020):
    case RT(cudaMemcpyToSymbol_ptds_v7000):
    case RT(cudaMemcpyToSymbolAsync_v3020):
    case RT(cudaMemcpyToSymbolAsync_ptsz_v7000): {
      auto& p = params<cudaMemcpyToSymbol_v3020_params>(call);
      bool async = cbid == RT(cudaMemcpyToSymbolAsync_v3020) ||
                   cbid == RT(cudaMemcpyToSymbolAsync_ptsz_v7000);
      emit_memcpy(call, linear_copy(static_cast<const char*>(p.symbol) + p.offset, p.src, p.count,
                                    p.kind == cudaMemcpyDefault ? CopyKind::Unknown : copy_kind(p.kind),
                                    async));
      break;
    }
    case RT(cudaMemcpyFromSymbol_v3020):
    case RT(cudaMemcpyFromSymbol_ptds_v7000):
    case RT(cudaMemcpyFromSymbolAsync_v3020):
    case RT(cudaMemcpyFromSymbolAsync_ptsz_v7000): {
      auto& p = params<cudaMemcpyFromSymbol_v3020_params>(call);
      bool async = cbid == RT(cudaMemcpyFromSymbolAsync_v3020) ||
                   cbid == RT(cudaMemcpyFromSymbolAsync_ptsz_v7000);
      emit_memcpy(call, linear_copy(p.dst, static_cast<const char*>(p.symbol) + p.offset, p.count,
                                    copy_kind(p.kind), async));
      break;
    }
    case RT(cudaMemset_v3020):
    case RT(cudaMemset_ptds_v7000): {
      auto& p = params<cudaMemset_v3020_params>(call);
      memset_bytes(call, p.devPtr, p.value, p.count, 1, 0, false);
      break;
    }
    case RT(cudaMemsetAsync_v3020):
    case RT(cudaMemsetAsync_ptsz_v7000): {
      auto& p = params<cudaMemsetAsync_v3020_params>(call);
      memset_bytes(call, p.devPtr, p.value, p.count, 1, 0, true);
      break;
    }
    case RT(cudaMemset2D_v3020):
    case RT(cudaMemset2D_ptds_v7000): {
      auto& p = params<cudaMemset2D_v3020_params>(call);
      memset_bytes(call, p.devPtr, p.value, p.width, p.height, p.pitch, false);
      break;
    }
    case RT(cudaMemset2DAsync_v3020):
    case RT(cudaMemset2DAsync_ptsz_v7000): {
      auto& p = params<cudaMemset2DAsync_v3020_params>(call);
      memset_bytes(call, p.devPtr, p.value, p.width, p.height, p.pitch, true);
      break;
    }
    case RT(cudaLaunchKernel_v7000):
    case RT(cudaLaunchKernel_ptsz_v7000): {
      auto& p = params<cudaLaunchKernel_v7000_params>(call);
      launch(call, p.func, p.gridDim, p.blockDim, p.sharedMem, LaunchKind::Driver);
      break;
    }
    case RT(cudaLaunchKernelExC_v11060):
    case RT(cudaLaunchKernelExC_ptsz_v11060): {
      auto& p = params<cudaLaunchKernelExC_v11060_params>(call);
      launch(call, p.func, p.config->gridDim, p.config->blockDim, p.config->dynamicSmemBytes,
             LaunchKind::DriverEx);
      break;
    }
    case RT(cudaLaunchCooperativeKernel_v9000):
    case RT(cudaLaunchCooperativeKernel_ptsz_v9000): {
      auto& p = params<cudaLaunchCooperativeKernel_v9000_params>(call);
      launch(call, p.func, p.gridDim, p.blockDim, p.sharedMem, LaunchKind::Cooperative);
      break;
    }
    case RT(cudaDeviceSynchronize_v3020):
    case RT(cudaThreadSynchronize_v3020):
      emit_sync(call, SyncKind::Device, nullptr, 0, false);
      break;
    case RT(cudaStreamSynchronize_v3020):
    case RT(cudaStreamSynchronize_ptsz_v7000):
      emit_sync(call, SyncKind::Stream, params<cudaStreamSynchronize_v3020_params>(call).stream, 0,
                cbid == RT(cudaStreamSynchronize_ptsz_v7000));
      break;
    case RT(cudaEventSynchronize_v3020): {
      auto event = params<cudaEventSynchronize_v3020_params>(call).event;
      emit_sync(call, SyncKind::Event, nullptr, addr(event), false);
      break;
    }
    case RT(cudaEventRecord_v3020):
    case RT(cudaEventRecord_ptsz_v7000):
    case RT(cudaEventRecordWithFlags_v11010):
    case RT(cudaEventRecordWithFlags_ptsz_v11010): {
      auto& p = params<cudaEventRecord_v3020_params>(call);  // WithFlags adds trailing flags
      emit_stream_event(call, StreamEventKind::Record, p.event, p.stream,
                        cbid == RT(cudaEventRecord_ptsz_v7000) ||
                            cbid == RT(cudaEventRecordWithFlags_ptsz_v11010));
      break;
    }
    case RT(cudaStreamWaitEvent_v3020):
    case RT(cudaStreamWaitEvent_ptsz_v7000): {
      auto& p = params<cudaStreamWaitEvent_v3020_params>(call);
      emit_stream_event(call, StreamEventKind::Wait, p.event, p.stream,
                        cbid == RT(cudaStreamWaitEvent_ptsz_v7000));
      break;
    }
    // Unified memory. In a CUDA 13 runtime each of these reaches a traced
    // driver call, which describes it; these cases are the fallback.
    case RT(cudaMemAdvise_v8000): {
      auto& p = params<LegacyMemAdviseParams>(call);
      emit_mem_advice(call, p.advice, addr(p.devPtr), p.count, legacy_mem_target(p.device));
      break;
    }
    case RT(cudaMemAdvise_v12020): {
      auto& p = params<cudaMemAdvise_v12020_params>(call);
      emit_mem_advice(call, p.advice, addr(p.devPtr), p.count, location_target(p.location));
      break;
    }
    case RT(cudaMemPrefetchAsync_v8000):
    case RT(cudaMemPrefetchAsync_ptsz_v8000): {
      auto& p = params<LegacyPrefetchParams>(call);
      emit_prefetch(call, addr(p.devPtr), p.count, legacy_mem_target(p.dstDevice),
                    {p.stream, cbid == RT(cudaMemPrefetchAsync_ptsz_v8000)});
      break;
    }
    case RT(cudaMemPrefetchAsync_v12020):
    case RT(cudaMemPrefetchAsync_ptsz_v12020): {
      auto& p = params<cudaMemPrefetchAsync_v12020_params>(call);
      emit_prefetch(call, addr(p.devPtr), p.count, location_target(p.location),
                    {p.stream, cbid == RT(cudaMemPrefetchAsync_ptsz_v12020)});
      break;
    }
    case RT(cudaMemPrefetchBatchAsync_v13000):
    case RT(cudaMemPrefetchBatchAsync_ptsz_v13000): {
      auto& p = params<cudaMemPrefetchBatchAsync_v13000_params>(call);
      emit_prefetch_batch(call, p.dptrs, p.sizes, p.count, p.prefetchLocs, p.prefetchLocIdxs,
                          p.numPrefetchLocs,
                          {p.stream, cbid == RT(cudaMemPrefetchBatchAsync_ptsz_v13000)});
      break;
    }
    case RT(cudaStreamAttachMemAsync_v6000):
    case RT(cudaStreamAttachMemAsync_ptsz_v7000): {
      auto& p = params<cudaStreamAttachMemAsync_v6000_params>(call);
      emit_stream_attach(call, addr(p.devPtr), p.length, p.flags, p.stream,
                         cbid == RT(cudaStreamAttachMemAsync_ptsz_v7000));
      break;
    }
    default:
      break;  // recorded as an API call only (graph launches, device reset)
  }
}

}  // namespace apptracer
