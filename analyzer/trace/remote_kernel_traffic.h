// What kernels read and wrote in memory that is not their own GPU's: another
// GPU's memory through peer access, or pinned (mapped) host memory read in
// place (zero-copy). Such bytes cross a link like a copy's, but no copy
// carries them: each kernel's are summed here per path, named as the
// machine model names paths (model/link_path.h), so `stats`, the report and
// `whatif` can show and price them beside the copies.
//
// With --exact the bytes are those the GPU touched; otherwise each pointer
// argument into such memory reaches to its allocation's end (as the DVDG
// assumes), which makes the bytes an upper bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/link_path.h"

namespace apptracer::trace {

class Trace;

// One kernel's bytes over one path, one way.
struct RemoteTraffic {
  int64_t kernel_id = 0;
  // The way the bytes went: a store from GPU 0 into GPU 1's memory is
  // PtoP.peer.gpu0.gpu1, a load of it PtoP.peer.gpu1.gpu0; host memory is
  // HtoD.pinned (loads) or DtoH.pinned (stores) of the kernel's GPU.
  model::LinkPath path;
  bool stores = false;  // the kernel wrote there; else it read
  int64_t bytes = 0;    // distinct bytes, over all its allocations on that path
  bool exact = false;   // --exact recorded them; else an upper bound
};

// Every kernel's traffic, by kernel id, then path and direction. Kernels of
// unknown device, and managed or pageable memory, are left out.
std::vector<RemoteTraffic> remote_kernel_traffic(Trace& trace);

// "kernel peer stores", "kernel peer loads", "kernel host stores", "kernel host loads".
std::string traffic_kind(const RemoteTraffic& traffic);

// Kernels' traffic summed per path, kind and exactness (in that order), as
// `stats --report kernel_traffic` and the report show it.
struct TrafficTotal {
  std::string path;  // model::LinkPath::name()
  std::string kind;  // traffic_kind()
  bool exact = false;
  int64_t kernels = 0;
  int64_t bytes = 0;
};
std::vector<TrafficTotal> traffic_by_path(const std::vector<RemoteTraffic>& traffic);

// "exact" or "bound".
const char* bytes_are(bool exact);

}  // namespace apptracer::trace
