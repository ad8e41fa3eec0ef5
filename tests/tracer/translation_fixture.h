// Driving translation (tracer/translate/) on the CPU: fabricated CUPTI
// callback data and parameter structs go in through the same entry point the
// live subscriber uses, and the records that come out are read back from
// real record buffers.
#pragma once

#include <cupti.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "translate/api_dispatch.h"
#include "translate/capture_context.h"
#include "translate/graph_callbacks.h"

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

class TranslationTest : public ::testing::Test {
 protected:
  TranslationTest() {
    cuda_.strings = &strings_;
    drained();  // what an earlier test left
  }

  static uint64_t clock() { return ++now_; }

  // One traced call: its enter and exit callbacks, and `inside` between
  // them (callbacks the driver fires during the call). Returns the records it made.
  template <typename Params>
  std::vector<Record> call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                           Params& params, int return_code = 0, const char* symbol = nullptr,
                           const std::function<void()>& inside = {}) {
    fire(domain, cbid, name, &params, return_code, symbol, CUPTI_API_ENTER);
    if (inside) inside();
    fire(domain, cbid, name, &params, return_code, symbol, CUPTI_API_EXIT);
    return drained();
  }

  // A graph resource callback, as CUPTI fires it (records stay in the buffers).
  void graph_callback(CUpti_CallbackId cbid, CUgraph graph, CUgraphNode node,
                      CUgraphNode original = nullptr) {
    CUpti_GraphData data{};
    data.graph = graph;
    data.node = node;
    data.originalNode = original;
    on_graph_callback(ctx_, cbid, data);
  }

  // A runtime call with a driver call nested inside it.
  template <typename RuntimeParams, typename DriverParams>
  std::vector<Record> nested_call(CUpti_CallbackId runtime_cbid, const char* runtime_name,
                                  RuntimeParams& runtime, CUpti_CallbackId driver_cbid,
                                  const char* driver_name, DriverParams& driver) {
    return call(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbid, runtime_name, runtime, 0, nullptr,
                [&] { inner_call(CUPTI_CB_DOMAIN_DRIVER_API, driver_cbid, driver_name, driver); });
  }

  // A traced call made inside another (its records stay in the buffers).
  template <typename Params>
  void inner_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                  Params& params, int return_code = 0) {
    fire(domain, cbid, name, &params, return_code, nullptr, CUPTI_API_ENTER);
    fire(domain, cbid, name, &params, return_code, nullptr, CUPTI_API_EXIT);
  }

  std::vector<Record> drained() {
    std::vector<Record> out;
    buffers_.drain([&](const Record* r, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (r[i].type != RecordType::Thread) out.push_back(r[i]);
      }
    });
    return out;
  }

  static std::vector<Record> of_type(const std::vector<Record>& records, RecordType type) {
    std::vector<Record> out;
    for (const Record& r : records) {
      if (r.type == type) out.push_back(r);
    }
    return out;
  }

  // The context a call runs in: its low bits are the device (FakeCudaQueries).
  CUcontext context_ = reinterpret_cast<CUcontext>(uintptr_t{0x7000} | 1);

  // One for the whole program, as in the tracer: a thread attaches to its
  // buffers once.
  static inline RecordBuffers buffers_{4 << 20};
  AllocationRegistry allocations_;
  StringTable strings_;
  FakeCudaQueries cuda_;
  CaptureContext ctx_{buffers_, allocations_, strings_, cuda_, &TranslationTest::clock, nullptr};

 private:
  void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, void* params,
            int return_code, const char* symbol, CUpti_ApiCallbackSite site) {
    // CUPTI keeps one correlation id and one data slot per call, from enter to exit.
    if (site == CUPTI_API_ENTER) stack_.push_back({++correlation_, 0, 0});
    Frame& frame = stack_.back();
    frame.return_code = return_code;
    CUpti_CallbackData data{};
    data.callbackSite = site;
    data.functionName = name;
    data.functionParams = params;
    data.functionReturnValue = &frame.return_code;
    data.symbolName = symbol;
    data.context = context_;
    data.correlationId = frame.correlation_id;
    data.correlationData = &frame.data;
    on_api_callback(ctx_, domain, cbid, &data);
    if (site == CUPTI_API_EXIT) stack_.pop_back();
  }

  struct Frame {
    uint32_t correlation_id;
    uint64_t data;
    int return_code;
  };
  std::vector<Frame> stack_;
  uint32_t correlation_ = 0;
  static inline uint64_t now_ = 1000;
};

}  // namespace apptracer::testing
