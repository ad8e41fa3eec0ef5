// Synthetic traces and system files for the what-if tests: a trace is a
// list of API calls, each with the GPU work it issued (recorded times in ns,
// chosen so predictions can be worked out by hand), and a system file is
// written with constant-bandwidth paths.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "trace_builder.h"
#include "analyzer/whatif/whatif.h"

namespace apptracer::whatif {

class WhatifTest : public ::testing::Test {
 public:
  void SetUp() override {
    base_ = scratch_ / "whatif";
    trace_path_ = base_ + ".db";
    system_path_ = base_ + "_system.json";
    trace_ = std::make_unique<testing::TraceBuilder>(trace_path_);
    testing::DeviceRow device;
    trace_->add_device(device);
    trace_->set_meta("host", "tracehost");
  }
  void TearDown() override { trace_.reset(); }

  // An API call of thread `tid`; returns its correlation id.
  int64_t call(const std::string& name, int64_t start, int64_t end, int64_t tid = 1) {
    testing::ApiCallRow row;
    row.name = name;
    row.correlation_id = ++correlation_;
    row.tid = tid;
    row.start_ns = start;
    row.end_ns = end;
    trace_->add(row);
    return correlation_;
  }

  int64_t kernel(int64_t correlation, int64_t issue, int64_t gpu_start, int64_t gpu_end, int64_t stream = 7,
                 const std::string& name = "work", int64_t device = 0) {
    testing::KernelRow row;
    row.call_correlation_id = correlation;
    row.mangled_name = "_Z" + name;
    row.demangled_name = name;
    row.device = device;
    row.stream = stream;
    row.api_start_ns = issue;
    row.gpu_start_ns = gpu_start;
    row.gpu_end_ns = gpu_end;
    return trace_->add(row);
  }

  // A copy between the host (memory `host`) and GPU `device`.
  struct Copy {
    Copy(CopyKind kind, MemoryKind host, int64_t bytes, bool async = true, int64_t stream = 7)
        : kind(kind), host(host), bytes(bytes), async(async), stream(stream) {}
    CopyKind kind;
    MemoryKind host;
    int64_t bytes;
    bool async;
    int64_t stream;
    std::optional<int64_t> src_alloc, dst_alloc;
    int64_t src_offset = 0, dst_offset = 0;  // into src_alloc, dst_alloc
    std::optional<int64_t> untouched_pages;  // of 16 sampled at the destination as the call began
    int64_t device = 0;
  };
  int64_t copy(int64_t correlation, const Copy& c, int64_t issue, int64_t gpu_start, int64_t gpu_end) {
    testing::MemcpyRow row;
    row.call_correlation_id = correlation;
    row.kind = c.kind;
    row.bytes = c.bytes;
    bool to_device = c.kind == CopyKind::HtoD;
    row.src_memory = to_device ? c.host : MemoryKind::Device;
    row.dst_memory = to_device ? MemoryKind::Device : c.host;
    row.src_device = to_device ? std::nullopt : std::optional<int64_t>(c.device);
    row.dst_device = to_device ? std::optional<int64_t>(c.device) : std::nullopt;
    (to_device ? row.src_numa_node : row.dst_numa_node) = 0;
    row.src_alloc_id = c.src_alloc;
    row.dst_alloc_id = c.dst_alloc;
    row.src_offset = c.src_offset;
    row.dst_offset = c.dst_offset;
    if (c.untouched_pages) {
      row.dst_sampled_pages = 16;
      row.dst_untouched_pages = c.untouched_pages;
    }
    row.stream = c.stream;
    row.is_async = c.async;
    row.api_start_ns = issue;
    row.gpu_start_ns = gpu_start;
    row.gpu_end_ns = gpu_end;
    return trace_->add(row);
  }

  void sync(int64_t correlation, SyncKind kind, int64_t start, int64_t end,
            std::optional<int64_t> stream = std::nullopt, std::optional<int64_t> event = std::nullopt,
            int64_t device = 0) {
    testing::SyncRow row;
    row.call_correlation_id = correlation;
    row.kind = kind;
    row.device = device;
    row.stream = stream;
    row.event_handle = event;
    row.start_ns = start;
    row.end_ns = end;
    trace_->add(row);
  }

  void event(int64_t correlation, StreamEventKind kind, int64_t handle, int64_t stream, int64_t ns,
             int64_t device = 0) {
    testing::StreamEventRow row;
    row.device = device;
    row.call_correlation_id = correlation;
    row.kind = kind;
    row.event_handle = handle;
    row.stream = stream;
    row.ns = ns;
    trace_->add(row);
  }

  // How `stream` orders with the legacy default stream (a `streams` row).
  void stream_kind(int64_t stream, StreamKind kind) {
    StreamRow row;
    row.stream = stream;
    row.context_id = 1;
    row.kind = kind;
    trace_->add(row);
  }

  // An allocation (device memory on GPU `device`); returns its id.
  int64_t buffer(AllocKind kind, int64_t address, int64_t bytes, int64_t device = 0) {
    testing::AllocationRow row;
    row.kind = kind;
    row.address = address;
    row.bytes = bytes;
    row.device = kind == AllocKind::Device ? std::optional<int64_t>(device) : std::nullopt;
    return trace_->add(row);
  }

  // One path per line: "NAME LATENCY_NS GBPS [DUPLEX]" (GB/s = bytes per ns;
  // DUPLEX: the share of it left while the opposite direction runs).
  // `graph_launch`, `tracing_cost`: those keys' JSON objects, "" for none.
  void write_system(const std::vector<std::string>& paths, const std::string& path = "",
                    const std::string& gpu = "NVIDIA H100", const std::string& graph_launch = "",
                    const std::string& tracing_cost = "") {
    std::string json = R"({"format": "apptracer system", "version": 3, "machine": {"hostname": "testbox",
      "gpus": [{"ordinal": 0, "name": ")" + gpu + R"(", "numa_node": 0}]}, "paths": [)";
    for (size_t i = 0; i < paths.size(); ++i) {
      char name[128];
      double latency = 0, gbps = 0, duplex = 0;
      bool has_duplex = std::sscanf(paths[i].c_str(), "%127s %lf %lf %lf", name, &latency, &gbps, &duplex) == 4;
      json += std::string(i ? "," : "") + R"({"name": ")" + name + R"(", "model": {"latency_ns": )" +
              std::to_string(latency) + R"(, "bandwidth": [{"bytes": 1, "gbps": )" + std::to_string(gbps) +
              "}]}" + (has_duplex ? R"(, "duplex": {"factor": )" + std::to_string(duplex) + "}" : "") + "}";
    }
    json += "]";
    if (!graph_launch.empty()) json += R"(, "graph_launch": )" + graph_launch;
    if (!tracing_cost.empty()) json += R"(, "tracing_cost": )" + tracing_cost;
    std::ofstream(path.empty() ? system_path_ : path) << json << "}\n";
  }

  WhatifResult run(WhatifOptions options = {}) {
    if (options.system_path.empty()) options.system_path = system_path_;
    trace::Trace trace(trace_->db(), trace_path_);
    return run_whatif(trace, options);
  }

  testing::ScratchDir scratch_;
  std::string base_, trace_path_, system_path_;
  std::unique_ptr<testing::TraceBuilder> trace_;
  int64_t correlation_ = 0;
};

}  // namespace apptracer::whatif
