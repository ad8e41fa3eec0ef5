#include "traced_callbacks.h"

namespace apptracer {

namespace {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

// Every id here has a case in runtime_calls.cpp or driver_calls.cpp, or is
// recorded as an API call only (graph launches, device reset).
const CUpti_CallbackId kRuntimeIds[] = {
    RT(cudaMalloc_v3020), RT(cudaMallocPitch_v3020), RT(cudaMalloc3D_v3020),
    RT(cudaMallocHost_v3020), RT(cudaHostAlloc_v3020), RT(cudaHostRegister_v4000),
    RT(cudaHostUnregister_v4000), RT(cudaMallocManaged_v6000), RT(cudaMallocAsync_v11020),
    RT(cudaMallocAsync_ptsz_v11020), RT(cudaMallocFromPoolAsync_v11020),
    RT(cudaMallocFromPoolAsync_ptsz_v11020), RT(cudaFree_v3020), RT(cudaFreeHost_v3020),
    RT(cudaFreeAsync_v11020), RT(cudaFreeAsync_ptsz_v11020),
    RT(cudaMemcpy_v3020), RT(cudaMemcpy_ptds_v7000), RT(cudaMemcpyAsync_v3020),
    RT(cudaMemcpyAsync_ptsz_v7000), RT(cudaMemcpy2D_v3020), RT(cudaMemcpy2D_ptds_v7000),
    RT(cudaMemcpy2DAsync_v3020), RT(cudaMemcpy2DAsync_ptsz_v7000), RT(cudaMemcpy3D_v3020),
    RT(cudaMemcpy3D_ptds_v7000), RT(cudaMemcpy3DAsync_v3020), RT(cudaMemcpy3DAsync_ptsz_v7000),
    RT(cudaMemcpyPeer_v4000), RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaMemcpyToSymbol_v3020), RT(cudaMemcpyToSymbol_ptds_v7000),
    RT(cudaMemcpyToSymbolAsync_v3020), RT(cudaMemcpyToSymbolAsync_ptsz_v7000),
    RT(cudaMemcpyFromSymbol_v3020), RT(cudaMemcpyFromSymbol_ptds_v7000),
    RT(cudaMemcpyFromSymbolAsync_v3020), RT(cudaMemcpyFromSymbolAsync_ptsz_v7000),
    RT(cudaMemset_v3020), RT(cudaMemset_ptds_v7000), RT(cudaMemsetAsync_v3020),
    RT(cudaMemsetAsync_ptsz_v7000), RT(cudaMemset2D_v3020), RT(cudaMemset2D_ptds_v7000),
    RT(cudaMemset2DAsync_v3020), RT(cudaMemset2DAsync_ptsz_v7000),
    RT(cudaLaunchKernel_v7000), RT(cudaLaunchKernel_ptsz_v7000), RT(cudaLaunchKernelExC_v11060),
    RT(cudaLaunchKernelExC_ptsz_v11060), RT(cudaLaunchCooperativeKernel_v9000),
    RT(cudaLaunchCooperativeKernel_ptsz_v9000), RT(cudaGraphLaunch_v10000),
    RT(cudaGraphLaunch_ptsz_v10000),
    RT(cudaDeviceSynchronize_v3020), RT(cudaThreadSynchronize_v3020),
    RT(cudaStreamSynchronize_v3020), RT(cudaStreamSynchronize_ptsz_v7000),
    RT(cudaEventSynchronize_v3020), RT(cudaEventRecord_v3020), RT(cudaEventRecord_ptsz_v7000),
    RT(cudaEventRecordWithFlags_v11010), RT(cudaEventRecordWithFlags_ptsz_v11010),
    RT(cudaStreamWaitEvent_v3020), RT(cudaStreamWaitEvent_ptsz_v7000), RT(cudaDeviceReset_v3020),
    RT(cudaMemAdvise_v8000), RT(cudaMemAdvise_v12020), RT(cudaMemPrefetchAsync_v8000),
    RT(cudaMemPrefetchAsync_ptsz_v8000), RT(cudaMemPrefetchAsync_v12020),
    RT(cudaMemPrefetchAsync_ptsz_v12020), RT(cudaMemPrefetchBatchAsync_v13000),
    RT(cudaMemPrefetchBatchAsync_ptsz_v13000), RT(cudaStreamAttachMemAsync_v6000),
    RT(cudaStreamAttachMemAsync_ptsz_v7000),
};

const CUpti_CallbackId kDriverIds[] = {
    DRV(cuMemAlloc_v2), DRV(cuMemAllocPitch_v2), DRV(cuMemAllocHost_v2), DRV(cuMemHostAlloc),
    DRV(cuMemHostRegister_v2), DRV(cuMemHostUnregister), DRV(cuMemAllocManaged),
    DRV(cuMemAllocAsync), DRV(cuMemAllocAsync_ptsz), DRV(cuMemAllocFromPoolAsync),
    DRV(cuMemAllocFromPoolAsync_ptsz), DRV(cuMemFree_v2), DRV(cuMemFreeHost), DRV(cuMemFreeAsync),
    DRV(cuMemFreeAsync_ptsz), DRV(cuMemAddressReserve), DRV(cuMemAddressFree), DRV(cuMemCreate),
    DRV(cuMemRelease), DRV(cuMemMap), DRV(cuMemUnmap),
    DRV(cuMemcpy), DRV(cuMemcpy_ptds), DRV(cuMemcpyAsync), DRV(cuMemcpyAsync_ptsz),
    DRV(cuMemcpyHtoD_v2), DRV(cuMemcpyHtoD_v2_ptds), DRV(cuMemcpyHtoDAsync_v2),
    DRV(cuMemcpyHtoDAsync_v2_ptsz), DRV(cuMemcpyDtoH_v2), DRV(cuMemcpyDtoH_v2_ptds),
    DRV(cuMemcpyDtoHAsync_v2), DRV(cuMemcpyDtoHAsync_v2_ptsz), DRV(cuMemcpyDtoD_v2),
    DRV(cuMemcpyDtoD_v2_ptds), DRV(cuMemcpyDtoDAsync_v2), DRV(cuMemcpyDtoDAsync_v2_ptsz),
    DRV(cuMemcpy2D_v2), DRV(cuMemcpy2D_v2_ptds), DRV(cuMemcpy2DUnaligned_v2),
    DRV(cuMemcpy2DUnaligned_v2_ptds), DRV(cuMemcpy2DAsync_v2), DRV(cuMemcpy2DAsync_v2_ptsz),
    DRV(cuMemcpy3D_v2), DRV(cuMemcpy3D_v2_ptds), DRV(cuMemcpy3DAsync_v2),
    DRV(cuMemcpy3DAsync_v2_ptsz), DRV(cuMemcpyPeer), DRV(cuMemcpyPeer_ptds),
    DRV(cuMemcpyPeerAsync), DRV(cuMemcpyPeerAsync_ptsz),
    DRV(cuMemsetD8_v2), DRV(cuMemsetD8_v2_ptds), DRV(cuMemsetD16_v2), DRV(cuMemsetD16_v2_ptds),
    DRV(cuMemsetD32_v2), DRV(cuMemsetD32_v2_ptds), DRV(cuMemsetD8Async), DRV(cuMemsetD8Async_ptsz),
    DRV(cuMemsetD16Async), DRV(cuMemsetD16Async_ptsz), DRV(cuMemsetD32Async),
    DRV(cuMemsetD32Async_ptsz), DRV(cuMemsetD2D8_v2), DRV(cuMemsetD2D8_v2_ptds),
    DRV(cuMemsetD2D16_v2), DRV(cuMemsetD2D16_v2_ptds), DRV(cuMemsetD2D32_v2),
    DRV(cuMemsetD2D32_v2_ptds), DRV(cuMemsetD2D8Async), DRV(cuMemsetD2D8Async_ptsz),
    DRV(cuMemsetD2D16Async), DRV(cuMemsetD2D16Async_ptsz), DRV(cuMemsetD2D32Async),
    DRV(cuMemsetD2D32Async_ptsz),
    DRV(cuLaunchKernel), DRV(cuLaunchKernel_ptsz), DRV(cuLaunchKernelEx), DRV(cuLaunchKernelEx_ptsz),
    DRV(cuLaunchCooperativeKernel), DRV(cuLaunchCooperativeKernel_ptsz), DRV(cuGraphLaunch),
    DRV(cuGraphLaunch_ptsz),
    DRV(cuCtxSynchronize), DRV(cuStreamSynchronize), DRV(cuStreamSynchronize_ptsz),
    DRV(cuEventSynchronize), DRV(cuEventRecord), DRV(cuEventRecord_ptsz),
    DRV(cuEventRecordWithFlags), DRV(cuEventRecordWithFlags_ptsz), DRV(cuStreamWaitEvent),
    DRV(cuStreamWaitEvent_ptsz),
    DRV(cuMemAdvise), DRV(cuMemAdvise_v2), DRV(cuMemPrefetchAsync), DRV(cuMemPrefetchAsync_ptsz),
    DRV(cuMemPrefetchAsync_v2), DRV(cuMemPrefetchAsync_v2_ptsz), DRV(cuMemPrefetchBatchAsync),
    DRV(cuMemPrefetchBatchAsync_ptsz), DRV(cuStreamAttachMemAsync), DRV(cuStreamAttachMemAsync_ptsz),
};

const CUpti_CallbackId kResourceIds[] = {CUPTI_CBID_RESOURCE_CONTEXT_CREATED};

const CUpti_ActivityKind kActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// Unified-memory counters: configured before CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER
// is enabled, once the driver is up (activity.cpp).
const CUpti_ActivityUnifiedMemoryCounterKind kUmCounterKinds[] = {
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP};

template <typename T, size_t N>
IdList<T> list(const T (&ids)[N]) {
  return {ids, N};
}

}  // namespace

IdList<CUpti_CallbackId> traced_runtime_callbacks() { return list(kRuntimeIds); }
IdList<CUpti_CallbackId> traced_driver_callbacks() { return list(kDriverIds); }
IdList<CUpti_CallbackId> traced_resource_callbacks() { return list(kResourceIds); }
IdList<CUpti_ActivityKind> traced_activity_kinds() { return list(kActivityKinds); }
IdList<CUpti_ActivityUnifiedMemoryCounterKind> traced_um_counter_kinds() {
  return list(kUmCounterKinds);
}

UmCounterSetup enable_traced_um_counters() {
  UmCounterSetup setup;
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> supported;
  for (CUpti_ActivityUnifiedMemoryCounterKind kind : traced_um_counter_kinds()) {
    CUpti_ActivityUnifiedMemoryCounterConfig config{};
    config.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES;
    config.kind = kind;
    config.enable = 1;
    CUptiResult result = cuptiActivityConfigureUnifiedMemoryCounter(&config, 1);
    if (result == CUPTI_SUCCESS) {
      supported.push_back(config);
      setup.enabled.push_back(kind);
    } else {
      setup.unsupported.emplace_back(kind, result);
    }
  }
  if (supported.empty()) return setup;
  setup.enable_result = cuptiActivityConfigureUnifiedMemoryCounter(
      supported.data(), static_cast<uint32_t>(supported.size()));
  if (setup.enable_result == CUPTI_SUCCESS) {
    setup.enable_result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
  return setup;
}

}  // namespace apptracer
