// NCCL's profiler plugin (v5), served by the tracer: NCCL loads
// libapptracer.so through NCCL_PROFILER_PLUGIN (set by the preload
// constructor) and calls these through the exported ncclProfiler_v5
// (nccl_profiler_export.cpp).
//
// What each event becomes:
//   init          a Communicator record: NCCL's commId is rank-invariant
//   CollApi/P2pApi  inside an interposed call: an op id left in the call
//                 state (the interposer records); else (NCCL linked
//                 statically, ...) a Collective record of its own
//   KernelLaunch  NcclLaunch begin / end around the plan's kernel launch
//   Coll/P2p      a CollectivePlan record: NCCL's seqNumber, algorithm,
//                 protocol, channels, for the op named by its parent handle
// Handles are op ids, not memory: nothing is allocated per event, and a
// parent handle stays valid after its event stopped.
#pragma once

#include "collectives/nccl_profiler_v5.h"

namespace apptracer::nccl {

// What the tracer asks NCCL to report.
constexpr int kEventMask =
    kProfileCollApi | kProfileP2pApi | kProfileKernelLaunch | kProfileColl | kProfileP2p;

ncclResult_t profiler_init(void** context, uint64_t comm_id, int* event_mask, const char* name,
                           int n_nodes, int nranks, int rank, ncclDebugLogger_t log);
ncclResult_t profiler_start_event(void* context, void** handle,
                                  ncclProfilerEventDescr_v5_t* descr);
ncclResult_t profiler_stop_event(void* handle);
ncclResult_t profiler_record_event_state(void* handle, int state,
                                         ncclProfilerEventStateArgs_v5_t* args);
ncclResult_t profiler_finalize(void* context);

}  // namespace apptracer::nccl
