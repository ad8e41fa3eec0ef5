// NCCL's profiler plugin interface, version 5 (NCCL 2.28; 2.29+ still loads
// it), mirrored from NCCL's src/include/plugin/profiler/profiler_v5.h so the
// tracer needs no NCCL headers. x86-64 LP64 layout; the static_asserts pin
// the offsets NCCL reads and writes (the union starts at 24; the descriptor
// is 112 bytes).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

extern "C" {

typedef int ncclResult_t;  // ncclSuccess = 0
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

typedef struct {
  uint64_t type;    // one ncclProfile* bit
  void* parentObj;  // the handle startEvent returned for the parent event
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v5_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                       int nNodes, int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, int eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

}  // extern "C"

namespace apptracer::nccl {

// Event type bits (NCCL's src/include/plugin/nccl_profiler.h).
enum ProfileEvent : uint64_t {
  kProfileGroup = 1 << 0,
  kProfileColl = 1 << 1,
  kProfileP2p = 1 << 2,
  kProfileProxyOp = 1 << 3,
  kProfileProxyStep = 1 << 4,
  kProfileProxyCtrl = 1 << 5,
  kProfileKernelCh = 1 << 6,
  kProfileNetPlugin = 1 << 7,
  kProfileGroupApi = 1 << 8,
  kProfileCollApi = 1 << 9,
  kProfileP2pApi = 1 << 10,
  kProfileKernelLaunch = 1 << 11,
};

static_assert(offsetof(ncclProfilerEventDescr_v5_t, rank) == 16);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.func) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.root) == 48);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.stream) == 56);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.graphCaptured) == 64);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2pApi.stream) == 48);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.datatype) == 72);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.nChannels) == 80);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.algo) == 88);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.proto) == 96);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2p.peer) == 56);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2p.nChannels) == 60);
static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112);
static_assert(offsetof(ncclProfiler_v5_t, finalize) == 40);

}  // namespace apptracer::nccl
