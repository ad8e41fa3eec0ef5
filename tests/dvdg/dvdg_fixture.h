// Shared pieces of the DVDG tests: a trace file per test, and graphs turned
// into readable edge lists ("a_h:0 -> a_d:1 [HtoD copy]") so expectations
// read like docs/dvdg.md.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/labels.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::dvdg {

// The graph's edges (graph.h holds a kernel's data edges as its reads and
// writes), of one op or of all, in program order.
inline std::vector<Edge> edges_of(const Graph& graph, uint32_t op) {
  std::vector<Edge> edges;
  graph.for_each_edge(op, [&](const Edge& edge) { edges.push_back(edge); });
  return edges;
}
inline std::vector<Edge> edges_of(const Graph& graph) {
  std::vector<Edge> edges;
  graph.for_each_edge([&](const Edge& edge) { edges.push_back(edge); });
  return edges;
}

class DvdgTest : public ::testing::Test {
 public:
  void SetUp() override {
    path_ = scratch_ / "trace.db";
    trace_ = std::make_unique<testing::TraceBuilder>(path_);
  }
  void TearDown() override { trace_.reset(); }

  // Adds an allocation a test refers to by `name`.
  int64_t buffer(const std::string& name, AllocKind kind, int64_t address, int64_t bytes,
                 int64_t alloc_ns = 0) {
    testing::AllocationRow row;
    row.kind = kind;
    row.address = address;
    row.bytes = bytes;
    row.device =
        memory_kind_of(kind) == MemoryKind::Device ? std::optional<int64_t>(0) : std::nullopt;
    row.alloc_ns = alloc_ns;
    int64_t id = trace_->add(row);
    names_[id] = name;
    return id;
  }

  // A copy between two named buffers: whole buffers unless offsets say otherwise.
  int64_t copy(CopyKind kind, int64_t src, int64_t dst, int64_t bytes, int64_t api_ns,
               std::optional<int64_t> stream = 7, int64_t dst_offset = 0, int64_t src_offset = 0) {
    testing::MemcpyRow row;
    row.kind = kind;
    row.bytes = bytes;
    row.src_alloc_id = src;
    row.dst_alloc_id = dst;
    row.src_offset = src_offset;
    row.dst_offset = dst_offset;
    row.src_memory = kind == CopyKind::HtoD ? MemoryKind::Pageable : MemoryKind::Device;
    row.dst_memory = kind == CopyKind::DtoH ? MemoryKind::Pageable : MemoryKind::Device;
    row.stream = stream;
    row.api_start_ns = api_ns;
    row.gpu_start_ns = api_ns + 5;
    row.gpu_end_ns = api_ns + 10;
    return trace_->add(row);
  }

  // A tensor block inside a named allocation, at `offset`; `name` it.
  int64_t block(const std::string& name, int64_t parent, int64_t offset, int64_t bytes,
                int64_t alloc_ns, std::optional<int64_t> free_ns = std::nullopt) {
    int64_t id = trace_->add_block(parent, offset, bytes, alloc_ns, free_ns);
    block_names_[id] = name;
    return id;
  }

  struct Arg {
    int64_t alloc_id;
    AccessKind access;
    AccessSource source;
    int64_t offset = 0;  // where the pointer points inside the allocation
  };

  int64_t kernel(const std::string& name, const std::vector<Arg>& args, int64_t api_ns,
                 std::optional<int64_t> stream = 7,
                 std::optional<int64_t> gpu_start = std::nullopt) {
    testing::KernelRow row;
    row.mangled_name = "_Z" + name;
    row.demangled_name = name;
    row.stream = stream;
    row.api_start_ns = api_ns;
    row.gpu_start_ns = gpu_start ? gpu_start : std::optional<int64_t>(api_ns + 5);
    row.gpu_end_ns = *row.gpu_start_ns + 5;
    int64_t id = trace_->add(row);
    int64_t index = 0;
    for (const Arg& arg : args) {
      testing::KernelArgRow arg_row;
      arg_row.kernel_id = id;
      arg_row.param_index = index;
      arg_row.offset = 8 * index++;
      arg_row.alloc_id = arg.alloc_id;
      arg_row.alloc_offset = arg.offset;
      arg_row.access = arg.access;
      arg_row.access_source = arg.source;
      trace_->add(arg_row);
    }
    return id;
  }

  Graph build(KernelAccesses kernel_accesses = KernelAccesses::Exact) {
    trace::Trace trace(trace_->db());
    return build_graph_from_trace(trace, kernel_accesses);
  }

  // "name:version", with "[begin,end)" after the name for a value holding
  // only part of its location.
  std::string value_name(const Graph& graph, uint32_t value) const {
    const Value& record = graph.values[value];
    const Location& where = graph.locations[record.location];
    std::string name = where.sub_allocation_id && block_names_.count(*where.sub_allocation_id)
                           ? block_names_.at(*where.sub_allocation_id)
                       : !where.sub_allocation_id && where.alloc_id && names_.count(*where.alloc_id)
                           ? names_.at(*where.alloc_id)
                           : "region@" + hex_address(where.address);
    if (record.offset != 0 || record.bytes != where.bytes) {
      name += "[" + std::to_string(record.offset) + "," +
              std::to_string(record.offset + record.bytes) + ")";
    }
    std::string text = name + ":" + std::to_string(record.version);
    int16_t residency = graph.residency(value);
    return residency == kNoResidency ? text : text + "@" + residency_name(residency);
  }

  std::string edge_text(const Graph& graph, const Edge& edge) const {
    std::string text = value_name(graph, edge.src_value) + " -> " +
                       value_name(graph, edge.dst_value) + " [" + op_name(graph, edge.op) + "]";
    if (edge.kind == EdgeKind::Carry) text += " (carry)";
    if (edge.kind == EdgeKind::Migration) text += " (migration)";
    if (edge.uninitialized_read) text += " (uninitialized)";
    return text;
  }

  // Every edge of the graph, in program order.
  std::vector<std::string> edges(const Graph& graph) const {
    std::vector<std::string> texts;
    for (const Edge& edge : edges_of(graph)) texts.push_back(edge_text(graph, edge));
    return texts;
  }

  testing::ScratchDir scratch_;
  std::string path_;
  std::unique_ptr<testing::TraceBuilder> trace_;
  std::map<int64_t, std::string> names_;        // allocations by id
  std::map<int64_t, std::string> block_names_;  // sub-allocations by id
};

// Fig. 6.1: three host and three device buffers, two H2D copies, one kernel,
// one D2H copy.
struct VectorAdd {
  int64_t a_h, b_h, s_h, a_d, b_d, s_d;
};

inline VectorAdd add_vector_add(DvdgTest& test, bool with_kernel_args = true) {
  constexpr int64_t kBytes = 4096;
  VectorAdd ids{};
  ids.a_h = test.buffer("a_h", AllocKind::PageableHost, 0x1000, kBytes, 1);
  ids.b_h = test.buffer("b_h", AllocKind::PageableHost, 0x3000, kBytes, 2);
  ids.s_h = test.buffer("s_h", AllocKind::PageableHost, 0x5000, kBytes, 3);
  ids.a_d = test.buffer("a_d", AllocKind::Device, 0x7f0000000000, kBytes, 4);
  ids.b_d = test.buffer("b_d", AllocKind::Device, 0x7f0000001000, kBytes, 5);
  ids.s_d = test.buffer("s_d", AllocKind::Device, 0x7f0000002000, kBytes, 6);
  test.copy(CopyKind::HtoD, ids.a_h, ids.a_d, kBytes, 100);
  test.copy(CopyKind::HtoD, ids.b_h, ids.b_d, kBytes, 200);
  std::vector<DvdgTest::Arg> args;
  if (with_kernel_args) {
    args = {{ids.a_d, AccessKind::Read, AccessSource::ConstSignature},
            {ids.b_d, AccessKind::Read, AccessSource::ConstSignature},
            {ids.s_d, AccessKind::ReadWrite, AccessSource::Assumed}};
  }
  test.kernel("vector_add", args, 300);
  test.copy(CopyKind::DtoH, ids.s_d, ids.s_h, kBytes, 400);
  return ids;
}

}  // namespace apptracer::dvdg
