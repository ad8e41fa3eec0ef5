// The logical path a recorded copy takes: what prices a `memcpys` row.
//
//   model::CopyEndpoints copy{CopyKind::HtoD, MemoryKind::Pageable, MemoryKind::Device,
//                             std::nullopt, 0, 0, std::nullopt};
//   model::path_of_copy(copy)             // HtoD.pageable.node0.gpu0
//   model::path_of_copy(copy, {true})     // HtoD.pinned.node0.gpu0: what pinning would give
#pragma once

#include <cstdint>
#include <optional>

#include "apptracer/enums.h"
#include "analyzer/model/link_path.h"

namespace apptracer::model {

// A copy as the trace records it (memcpys columns of the same names).
struct CopyEndpoints {
  CopyKind kind = CopyKind::Unknown;
  MemoryKind src_memory = MemoryKind::Unknown;
  MemoryKind dst_memory = MemoryKind::Unknown;
  std::optional<int64_t> src_device, dst_device;
  std::optional<int64_t> src_numa, dst_numa;
  // Pageable destinations: of the pages the tracer sampled as the copy began
  // (memcpys.dst_sampled_pages), how many nothing had touched yet.
  int64_t dst_sampled_pages = 0;
  int64_t dst_untouched_pages = 0;
};

// Changes to where the copy's host memory is.
struct Placement {
  bool pin = false;              // pageable host memory pinned
  std::optional<int> numa_node;  // host memory on this node
};

// HtoD and DtoH from pageable or pinned memory (node from the host side;
// DtoH into pageable memory most of whose sampled pages were untouched:
// fresh),
// DtoD within a GPU, PtoP.peer between two GPUs (a trace does not say
// whether peer access was on: SystemModel callers fall back to
// PeerStaged). nullopt for what no path models: host to host, managed
// memory, unknown endpoints.
std::optional<LinkPath> path_of_copy(const CopyEndpoints& copy, const Placement& placement = {});

}  // namespace apptracer::model
