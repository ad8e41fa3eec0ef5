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

// What a copy staged through pageable memory that took `recorded_ns` (its
// staging and DMA) would take from pinned memory: its pinned path's time.
// Where the copy ran faster than its pageable path's model, the machine is
// faster than its system file says, and the pinned time is scaled by the
// same ratio, so a copy the model prices faster pinned is never slower
// pinned than recorded. (A copy slower than the model paid for its staging,
// which pinning removes: the pinned time is kept.) `whatif --pin` and
// diagnose's pageable_copy price pinning with it.
double pinned_copy_ns(double pinned_model_ns, double pageable_model_ns, double recorded_ns);

}  // namespace apptracer::model
