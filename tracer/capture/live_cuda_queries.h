// The CUDA questions translation asks, answered by CUPTI and the driver in a
// traced process. Each answer is cached per thread: a launch loop asks the
// same questions (this context's device, this stream's id, this function's
// layout) on every call.
#pragma once

#include "translate/capture_context.h"

namespace apptracer {

class LiveCudaQueries final : public CudaQueries {
 public:
  explicit LiveCudaQueries(StringTable& strings) : strings_(strings) {}

  int32_t device_of(CUcontext context) override;
  int64_t stream_id(CUcontext context, CUstream stream, bool per_thread) override;
  void forget_stream(CUstream stream) override;
  const LaunchedFunction& function(const void* handle, const char* symbol_name) override;
  void forget_functions() override;
  std::pair<uint64_t, uint64_t> allocation_range(uint64_t address) override;
  uint32_t graph_id(CUgraph graph) override;
  uint64_t graph_node_id(CUgraphNode node) override;
  GraphNodeType graph_node_type(CUgraphNode node) override;
  bool kernel_node_params(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS& out) override;
  bool memcpy_node_params(CUgraphNode node, CUDA_MEMCPY3D& out) override;
  bool memset_node_params(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS& out) override;

 private:
  StringTable& strings_;
};

}  // namespace apptracer
