// What translation works with: where records go, the allocation lifetimes it
// keeps, and the few questions only the CUDA driver or CUPTI can answer. The
// injected library fills it with the live pieces (capture/); the CPU tests
// fill it with fabricated ones and drive translation with fabricated CUPTI
// callback data and activity records.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "buffer/address_regions.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "apptracer/enums.h"

namespace apptracer {

// A launched function: its interned mangled name (0 when unknown) and where
// each parameter sits in its parameter buffer (empty when unknown).
struct LaunchedFunction {
  uint32_t name_id = 0;
  std::vector<uint32_t> param_offsets;
  std::vector<uint32_t> param_sizes;
};

class CudaQueries {
 public:
  virtual ~CudaQueries() = default;
  // The ordinal of a context's device, -1 when unknown.
  virtual int32_t device_of(CUcontext context) = 0;
  // CUPTI's id of a stream (per_thread: the default stream means the calling
  // thread's), -1 when unknown.
  virtual int64_t stream_id(CUcontext context, CUstream stream, bool per_thread) = 0;
  // A stream is being destroyed: its handle may name another stream later.
  virtual void forget_stream(CUstream stream) = 0;
  // A launched function, by handle (CUfunction, or the CUkernel of runtime
  // launches); `symbol_name` is the runtime's name for it, when it gave one.
  // The answer stays valid for the life of the process.
  virtual const LaunchedFunction& function(const void* handle, const char* symbol_name) = 0;
  // A module is being unloaded: its functions' handles may name other
  // functions, with other parameters, once another module is loaded.
  virtual void forget_functions() = 0;
  // The base and size of the device allocation holding `address` ({0, 0}
  // when unknown): for memory mapped from another process.
  virtual std::pair<uint64_t, uint64_t> allocation_range(uint64_t address) = 0;

  // CUDA graphs: CUPTI's ids of a graph and a node (0 when unknown),
  // a node's type, and its parameters as the driver holds them (false when
  // the driver cannot say). Asked inside CUPTI's graph callbacks.
  virtual uint32_t graph_id(CUgraph graph) = 0;
  virtual uint64_t graph_node_id(CUgraphNode node) = 0;
  virtual GraphNodeType graph_node_type(CUgraphNode node) = 0;
  virtual bool kernel_node_params(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS& out) = 0;
  virtual bool memcpy_node_params(CUgraphNode node, CUDA_MEMCPY3D& out) = 0;
  virtual bool memset_node_params(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS& out) = 0;
};

struct CaptureContext {
  RecordBuffers& buffers;
  AllocationRegistry& allocations;  // CUDA's allocations, with their lifetimes
  StringTable& strings;
  CudaQueries& cuda;
  uint64_t (*now_ns)();
  // Host blocks' address span (host/), or nullptr when host memory is not
  // watched: parameter words inside it may point to host memory.
  const AddressRegions* host_blocks = nullptr;
  // Launches' pointer arguments are read (APPTRACER_KERNEL_ARGUMENTS): off,
  // kernels are timed but what memory they touch is unknown.
  bool kernel_arguments = true;
};

}  // namespace apptracer
