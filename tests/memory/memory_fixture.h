// Synthetic traces for the memory view's tests: allocations, framework
// blocks, kernels that read and write them, NVTX step ranges, each at a
// time the test gives.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/memory/memory_model.h"
#include "trace_builder.h"

namespace apptracer::memory {

class MemoryTest : public ::testing::Test {
 public:
  // An allocation of `kind` (device memory on GPU 0 unless host memory).
  int64_t allocation(AllocKind kind, int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns = std::nullopt,
                     std::optional<int64_t> correlation = std::nullopt) {
    testing::AllocationRow row;
    row.kind = kind;
    row.address = next_address_;
    next_address_ += bytes + 4096;
    row.bytes = bytes;
    row.device = is_device_memory(memory_kind_of(kind)) ? std::optional<int64_t>(0) : std::nullopt;
    row.alloc_ns = alloc_ns;
    row.free_ns = free_ns;
    row.alloc_correlation_id = correlation;
    return trace.add(row);
  }

  // An all-gather of floats that thread `tid` called from `start_ns` to `end_ns`.
  void collective_call(int64_t tid, int64_t start_ns, int64_t end_ns,
                       std::optional<int64_t> group = std::nullopt) {
    apptracer::CollectiveRow call;
    call.kind = CollectiveKind::AllGather;
    call.datatype = DataType::Float32;
    call.element_bytes = 4;
    call.tid = tid;
    call.group_id = group;
    call.api_start_ns = start_ns;
    call.api_end_ns = end_ns;
    trace.add(call);
  }

  // A PyTorch block at `offset` in `segment`, handed out at `alloc_ns` and
  // released by the program at `free_requested_ns` (back in the pool at `free_ns`).
  int64_t block(int64_t segment, int64_t offset, int64_t bytes, int64_t alloc_ns,
                std::optional<int64_t> free_requested_ns = std::nullopt, std::optional<int64_t> free_ns = std::nullopt) {
    int64_t id = trace.add_block(segment, offset, bytes, alloc_ns, free_ns);
    if (free_requested_ns) {
      Statement set = trace.db().prepare("UPDATE sub_allocations SET free_requested_ns = ? WHERE id = ?");
      set.bind(1, *free_requested_ns).bind(2, id).run();
    }
    return id;
  }

  struct Arg {
    int64_t alloc;
    AccessKind access;
    int64_t offset = 0;
  };
  // A kernel issued at `issue_ns`, running from 100 ns later for `duration`.
  int64_t kernel(const std::string& name, int64_t issue_ns, int64_t duration, std::vector<Arg> args) {
    testing::KernelRow row;
    row.mangled_name = "_Z" + name;
    row.demangled_name = name + "()";
    row.stream = 7;
    row.api_start_ns = issue_ns;
    row.gpu_start_ns = issue_ns + 100;
    row.gpu_end_ns = issue_ns + 100 + duration;
    int64_t id = trace.add(row);
    for (size_t i = 0; i < args.size(); ++i) {
      testing::KernelArgRow arg;
      arg.kernel_id = id;
      arg.param_index = static_cast<int64_t>(i);
      arg.offset = static_cast<int64_t>(8 * i);
      arg.alloc_id = args[i].alloc;
      arg.alloc_offset = args[i].offset;
      arg.access = args[i].access;
      arg.access_source = AccessSource::ConstSignature;
      trace.add(arg);
    }
    return id;
  }

  void range(const std::string& name, int64_t start, int64_t end) {
    testing::NvtxRangeRow row;
    row.name = name;
    row.start_ns = start;
    row.end_ns = end;
    trace.add(row);
  }

  MemoryModel model(trace::Trace& opened) {
    graph = dvdg::build_graph_from_trace(opened);
    return build_memory_model(opened, graph);
  }

  const DeviceMemory& device(const MemoryModel& built, std::optional<int64_t> ordinal) {
    for (const DeviceMemory& d : built.devices) {
      if (d.device.optional() == ordinal) return d;
    }
    throw std::runtime_error("no such device in the model");
  }

  // The bytes of an owner at the device's peak (0: none).
  static int64_t owner_bytes(const DeviceMemory& d, Owner owner) {
    for (const OwnerBytes& o : d.at_peak) {
      if (o.owner == owner) return o.bytes;
    }
    return 0;
  }

  static const MemoryItem& item(const MemoryModel& built, MemoryItem::Kind kind, int64_t id) {
    for (const MemoryItem& i : built.items) {
      if (i.kind == kind && i.id == id) return i;
    }
    throw std::runtime_error("no such item in the model");
  }

  testing::TraceBuilder trace;
  dvdg::Graph graph;

 private:
  int64_t next_address_ = 0x7f0000000000;
};

}  // namespace apptracer::memory
