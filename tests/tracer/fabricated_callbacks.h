// Fabricated CUPTI callbacks (no test framework): CUDA's answers made up, and
// API calls fired through the tracer's callback entry point as CUPTI fires
// them, enter to exit. Shared by the translation tests and
// bench/launch_translation.cpp.
#pragma once

#include <cupti.h>

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "buffer/string_table.h"
#include "translate/api_dispatch.h"
#include "translate/capture_context.h"

namespace apptracer::testing {

// CUDA's answers, made up: contexts map to devices, streams to ids
// (remembering whether the per-thread default stream was asked for).
class FakeCudaQueries final : public CudaQueries {
 public:
  int32_t device_of(CUcontext context) override {
    return context ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(context) & 0xf) : -1;
  }
  int64_t stream_id(CUcontext, CUstream stream, bool per_thread) override {
    last_per_thread = per_thread;
    if (stream == nullptr) return per_thread ? 2 : 1;  // per-thread vs legacy default stream
    return 100 + static_cast<int64_t>(reinterpret_cast<uintptr_t>(stream) & 0xff);
  }
  void forget_stream(CUstream stream) override { forgotten.push_back(stream); }
  void forget_functions() override {}
  const LaunchedFunction& function(const void* handle, const char* symbol_name) override {
    auto& f = functions[handle];
    if (f.name_id == 0) f.name_id = strings->intern(symbol_name ? symbol_name : "_Z6kernelPfPKfi");
    return f;
  }
  std::pair<uint64_t, uint64_t> allocation_range(uint64_t address) override {
    auto it = ranges.find(address);
    return it == ranges.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
  }
  // Graphs and nodes: their ids are their handles' values.
  uint32_t graph_id(CUgraph graph) override {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph));
  }
  uint64_t graph_node_id(CUgraphNode node) override { return reinterpret_cast<uintptr_t>(node); }
  GraphNodeType graph_node_type(CUgraphNode node) override {
    auto it = nodes.find(node);
    return it == nodes.end() ? GraphNodeType::Unknown : it->second.type;
  }
  bool kernel_node_params(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS& out) override {
    return node_params(node, GraphNodeType::Kernel, &FakeNode::kernel, out);
  }
  bool memcpy_node_params(CUgraphNode node, CUDA_MEMCPY3D& out) override {
    return node_params(node, GraphNodeType::Memcpy, &FakeNode::copy, out);
  }
  bool memset_node_params(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS& out) override {
    return node_params(node, GraphNodeType::Memset, &FakeNode::memset, out);
  }

  StringTable* strings = nullptr;
  bool last_per_thread = false;
  std::vector<CUstream> forgotten;
  std::map<const void*, LaunchedFunction> functions;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> ranges;
  struct FakeNode {
    GraphNodeType type = GraphNodeType::Unknown;
    CUDA_KERNEL_NODE_PARAMS kernel{};
    CUDA_MEMCPY3D copy{};
    CUDA_MEMSET_NODE_PARAMS memset{};
  };
  std::map<CUgraphNode, FakeNode> nodes;

 private:
  template <typename Params>
  bool node_params(CUgraphNode node, GraphNodeType type, Params FakeNode::*member, Params& out) {
    auto it = nodes.find(node);
    if (it == nodes.end() || it->second.type != type) return false;
    out = it->second.*member;
    return true;
  }
};

// Fires API callbacks into `ctx` as CUPTI does: one correlation id and one
// data slot per call, kept from its enter to its exit.
class CallbackFirer {
 public:
  explicit CallbackFirer(CaptureContext& ctx) : ctx_(ctx) {}

  void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, void* params,
            int return_code, const char* symbol, CUpti_ApiCallbackSite site) {
    if (site == CUPTI_API_ENTER) stack_.push_back({++correlation_, 0, 0});
    Frame& frame = stack_.back();
    frame.return_code = return_code;
    CUpti_CallbackData data{};
    data.callbackSite = site;
    data.functionName = name;
    data.functionParams = params;
    data.functionReturnValue = &frame.return_code;
    data.symbolName = symbol;
    data.context = context;
    data.correlationId = frame.correlation_id;
    data.correlationData = &frame.data;
    on_api_callback(ctx_, domain, cbid, &data);
    if (site == CUPTI_API_EXIT) stack_.pop_back();
  }

  // One call, `inside` between its enter and exit (calls it made).
  void call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, void* params,
            int return_code = 0, const char* symbol = nullptr, const std::function<void()>& inside = {}) {
    fire(domain, cbid, name, params, return_code, symbol, CUPTI_API_ENTER);
    if (inside) inside();
    fire(domain, cbid, name, params, return_code, symbol, CUPTI_API_EXIT);
  }

  // The context calls run in: its low bits are the device (FakeCudaQueries).
  CUcontext context = reinterpret_cast<CUcontext>(uintptr_t{0x7000} | 1);

 private:
  struct Frame {
    uint32_t correlation_id;
    uint64_t data;
    int return_code;
  };
  CaptureContext& ctx_;
  std::vector<Frame> stack_;
  uint32_t correlation_ = 0;
};

}  // namespace apptracer::testing
