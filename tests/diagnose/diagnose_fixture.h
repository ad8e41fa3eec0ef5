// Synthetic traces for the diagnose tests: a few helpers over TraceBuilder
// that add a buffer, a copy, a kernel with its arguments, a host call, so a
// test reads as the program it stands for. Copies on the pinned HtoD path
// follow t = 2000 ns + bytes / 10 GB/s exactly (kLatency, kBandwidth), so
// the measured link model's predictions are exact.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/diagnose/link_model_choice.h"
#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/diagnose/rules.h"
#include "trace_builder.h"
#include "analyzer/diagnose/trace_facts.h"

namespace apptracer::diagnose {

inline constexpr int64_t kLatency = 2000;   // ns
inline constexpr int64_t kBandwidth = 10;   // bytes per ns
inline constexpr int64_t pinned_ns(int64_t bytes) { return kLatency + bytes / kBandwidth; }

class DiagnoseTest : public ::testing::Test {
 public:
  DiagnoseTest() {
    testing::DeviceRow device;
    device.numa_node = 0;
    trace.add_device(device);
  }

  int64_t buffer(AllocKind kind, int64_t bytes, int64_t alloc_ns = 0) {
    testing::AllocationRow row;
    row.kind = kind;
    row.address = next_address_;
    next_address_ += bytes + 4096;
    row.bytes = bytes;
    row.device = is_device_memory(memory_kind_of(kind)) || kind == AllocKind::Managed
                     ? std::optional<int64_t>(0)
                     : std::nullopt;
    row.alloc_ns = alloc_ns;
    return trace.add(row);
  }

  // A buffer made by a 50 us call named `by` at `ns`: not using it would
  // save that call.
  int64_t allocated_by(const std::string& by, AllocKind kind, int64_t bytes, int64_t ns) {
    int64_t id = buffer(kind, bytes, ns);
    Statement made = trace.db().prepare("UPDATE allocations SET alloc_correlation_id = ? WHERE id = ?");
    made.bind(1, call(by, ns, ns + 50'000)).bind(2, id).run();
    return id;
  }

  // A block a framework's allocator (PyTorch's caching allocator) handed out
  // at `offset` in `segment`; its id.
  int64_t block(int64_t segment, int64_t offset, int64_t bytes) {
    return trace.add_block(segment, offset, bytes, 500);
  }

  // Page-locked host memory a kernel writes its result to: an op reads only
  // if it writes (DVDG edges go from what an op read to what it wrote), and
  // host memory is read by CPU code the trace cannot see, so it is never
  // "written and not read".
  int64_t sink() { return buffer(AllocKind::PinnedHost, 64); }

  // A host call named `name` on thread 1 from `start` to `end`; its correlation id.
  int64_t call(const std::string& name, int64_t start, int64_t end, int64_t tid = 1) {
    testing::ApiCallRow row;
    row.name = name;
    row.correlation_id = ++correlation_;
    row.start_ns = start;
    row.end_ns = end;
    row.tid = tid;
    trace.add(row);
    return correlation_;
  }

  // XLA compiling from `start` to `end`, its range on thread `tid` (by
  // default not the one the program's work is issued on: autotuning runs on
  // worker threads while the compiling thread waits in its range).
  void xla_compiling(int64_t start, int64_t end, int64_t tid = 99,
                     const std::string& name = "XlaCompile:#module=jit_train_step#") {
    testing::NvtxRangeRow range;
    range.name = name;
    range.tid = tid;
    range.start_ns = start;
    range.end_ns = end;
    trace.add(range);
  }

  // An NCCL all-reduce call on thread 1 from `start` to `end`.
  void nccl_call(int64_t start, int64_t end) {
    apptracer::CollectiveRow row;
    row.kind = CollectiveKind::AllReduce;
    row.datatype = DataType::Float32;
    row.element_bytes = 4;
    row.tid = 1;
    row.api_start_ns = start;
    row.api_end_ns = end;
    trace.add(row);
  }

  // Five allocations of `kind` and 1 MiB at one address, each made (10 us of
  // cudaMalloc) after the previous one was freed (5 us of cudaFree); their ids.
  std::vector<int64_t> churn(AllocKind kind) {
    std::vector<int64_t> ids;
    for (int i = 0; i < 5; ++i) {
      testing::AllocationRow row;
      row.kind = kind;
      row.address = 0x7e0000000000;
      row.bytes = 1 << 20;
      int64_t t = i * 100'000;
      row.alloc_ns = t;
      row.alloc_correlation_id = call("cudaMalloc", t, t + 10'000);
      row.free_ns = t + 50'000;
      row.free_correlation_id = call("cudaFree", t + 50'000, t + 55'000);
      ids.push_back(trace.add(row));
    }
    return ids;
  }

  // A copy whose GPU time is [start, start + duration], issued by a call at `issue`.
  int64_t copy(CopyKind kind, int64_t src, int64_t dst, int64_t bytes, int64_t start,
               int64_t duration, MemoryKind host = MemoryKind::Pinned, bool async = true,
               int64_t stream = 7) {
    testing::MemcpyRow row;
    row.kind = kind;
    row.bytes = bytes;
    row.src_alloc_id = src;
    row.dst_alloc_id = dst;
    row.src_offset = row.dst_offset = 0;
    row.src_memory = kind == CopyKind::HtoD ? host : MemoryKind::Device;
    row.dst_memory = kind == CopyKind::DtoH ? host : MemoryKind::Device;
    row.src_device = kind == CopyKind::HtoD ? std::nullopt : std::optional<int64_t>(0);
    row.dst_device = kind == CopyKind::DtoH ? std::nullopt : std::optional<int64_t>(0);
    row.stream = stream;
    row.is_async = async;
    row.call_correlation_id = call(async ? "cudaMemcpyAsync" : "cudaMemcpy", start - 500,
                                   async ? start - 400 : start + duration + 100);
    row.api_start_ns = start - 500;
    row.gpu_start_ns = start;
    row.gpu_end_ns = start + duration;
    return trace.add(row);
  }

  // A pinned HtoD copy at the calibrated speed.
  int64_t pinned_copy(int64_t src, int64_t dst, int64_t bytes, int64_t start, int64_t stream = 7) {
    return copy(CopyKind::HtoD, src, dst, bytes, start, pinned_ns(bytes), MemoryKind::Pinned, true,
                stream);
  }

  struct Arg {
    int64_t alloc;
    AccessKind access;
    int64_t offset = 0;  // the pointer passed: the allocation's address plus this
    // How the access was decided: a const pointer's read is certain; any
    // other pointer is assumed read and written.
    AccessSource source = AccessSource::ConstSignature;
  };
  int64_t kernel(const std::string& name, int64_t start, int64_t duration, std::vector<Arg> args,
                 int64_t stream = 7, int64_t launch_ns = 300) {
    testing::KernelRow row;
    row.mangled_name = "_Z" + name;
    row.demangled_name = name.find('(') == std::string::npos ? name + "()" : name;
    row.stream = stream;
    row.call_correlation_id = call("cudaLaunchKernel", start - 1000, start - 1000 + launch_ns);
    row.api_start_ns = start - 1000;
    row.gpu_start_ns = start;
    row.gpu_end_ns = start + duration;
    int64_t id = trace.add(row);
    for (size_t i = 0; i < args.size(); ++i) {
      testing::KernelArgRow arg;
      arg.kernel_id = id;
      arg.param_index = static_cast<int64_t>(i);
      arg.offset = static_cast<int64_t>(8 * i);
      arg.alloc_id = args[i].alloc;
      arg.alloc_offset = args[i].offset;
      arg.access = args[i].access;
      arg.access_source = args[i].source;
      trace.add(arg);
    }
    if (args.empty()) {
      // An argument set with no pointers: the arguments are known, and touch nothing.
      KernelArgSetRow set;
      int64_t set_id = trace.add(set);
      Statement attach = trace.db().prepare("UPDATE kernels SET arg_set_id = ? WHERE id = ?");
      attach.bind(1, set_id).bind(2, id).run();
    }
    return id;
  }

  // Every finding, ranked, with the trace's measured link model (or `cost`).
  std::vector<Finding> all_findings(const TransferCost* cost = nullptr) {
    trace::Trace model(trace.db());
    TraceFacts facts = read_trace_facts(model);
    MeasuredTransferCost measured(facts);
    return diagnose(facts, cost ? *cost : measured);
  }

  // Findings of one rule with the trace's measured link model (or `cost`).
  std::vector<Finding> findings(const std::string& rule, const TransferCost* cost = nullptr) {
    std::vector<Finding> matching;
    for (Finding& f : all_findings(cost)) {
      if (f.rule == rule) matching.push_back(std::move(f));
    }
    return matching;
  }

  testing::TraceBuilder trace;

 private:
  int64_t next_address_ = 0x7f0000000000;
  int64_t correlation_ = 0;
};

// The evidence rows of a finding from one table.
inline std::vector<int64_t> rows_of(const Finding& finding, const std::string& table) {
  std::vector<int64_t> rows;
  for (const Evidence& e : finding.rows) {
    if (e.table == table) rows.push_back(e.row);
  }
  return rows;
}

}  // namespace apptracer::diagnose
