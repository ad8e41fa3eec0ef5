// Driving translation (tracer/translate/) on the CPU: fabricated CUPTI
// callback data and parameter structs go in through the same entry point the
// live subscriber uses, and the records that come out are read back from
// real record buffers.
#pragma once

#include <cupti.h>
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "fabricated_callbacks.h"
#include "translate/capture_context.h"
#include "translate/graph_callbacks.h"

namespace apptracer::testing {

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

  // One for the whole program, as in the tracer: a thread attaches to its
  // buffers once.
  static inline RecordBuffers buffers_{4 << 20};
  AllocationRegistry allocations_;
  StringTable strings_;
  FakeCudaQueries cuda_;
  CaptureContext ctx_{buffers_, allocations_, strings_, cuda_, &TranslationTest::clock, nullptr};
  CallbackFirer callbacks_{ctx_};

 private:
  void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, void* params,
            int return_code, const char* symbol, CUpti_ApiCallbackSite site) {
    callbacks_.fire(domain, cbid, name, params, return_code, symbol, site);
  }

  static inline uint64_t now_ = 1000;
};

}  // namespace apptracer::testing
