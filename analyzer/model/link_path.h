// A logical communication path of a machine (Pearson's thesis, ch. 3): the
// way bytes travel from one memory to another, as a program sees it. Two
// copies over the same wires are different paths when the software route
// differs: a copy from pageable memory is staged through a pinned buffer by
// the driver, a peer copy without peer access goes through the host.
//
// Each path has a name, used in system files, in `whatif --link` and in
// reports:
//
//   HtoD.pinned.node0.gpu0     host -> GPU 0 from pinned memory on NUMA node 0
//   DtoH.pageable.node1.gpu0   GPU 0 -> pageable memory on node 1
//   DtoH.fresh.node0.gpu0      GPU 0 -> pageable memory nothing touched yet:
//                              the driver's staging copy takes the first-touch
//                              page fault of every page
//   HtoD.pinned.gpu0           the host buffer's node unknown
//   DtoD.gpu0                  within GPU 0's memory
//   PtoP.peer.gpu0.gpu1        GPU 0 -> GPU 1 with peer access (NVLink or PCIe)
//   PtoP.staged.gpu0.gpu1      GPU 0 -> GPU 1 without it (through host memory)
//   prefetch.HtoD.gpu0         managed memory prefetched to GPU 0
//   prefetch.DtoH.gpu0         managed memory prefetched from GPU 0 to the host
//   fault.HtoD.gpu0            managed memory a GPU 0 kernel faults in on demand
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace apptracer::model {

enum class LinkKind : uint8_t {
  HtoD,
  DtoH,
  DtoD,
  PeerDirect,
  PeerStaged,
  PrefetchHtoD,
  PrefetchDtoH,
  FaultHtoD,
};

// Host memory of a HtoD or DtoH path; None for every other kind. Fresh:
// pageable memory never touched before the copy (DtoH only: a copy from such
// memory reads no page it would have to make).
enum class HostMemory : uint8_t { None, Pageable, Pinned, Fresh };

struct LinkPath {
  LinkKind kind = LinkKind::HtoD;
  HostMemory host = HostMemory::None;
  int numa_node = -1;  // HtoD, DtoH: the host buffer's node; -1 unknown
  int device = 0;      // the GPU; peer copies: the source GPU
  int peer = -1;       // peer copies: the destination GPU

  std::string name() const;
  // The path a name describes (see above), or nullopt for anything else.
  static std::optional<LinkPath> parse(std::string_view name);

  bool operator==(const LinkPath& other) const {
    return kind == other.kind && host == other.host && numa_node == other.numa_node &&
           device == other.device && peer == other.peer;
  }
  bool operator!=(const LinkPath& other) const { return !(*this == other); }
};

// Whether `name` is `pattern` or starts with it followed by '.': "HtoD"
// matches every HtoD path, "HtoD.pinned" every pinned one.
bool name_matches(std::string_view name, std::string_view pattern);

}  // namespace apptracer::model
