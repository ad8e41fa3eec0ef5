// --overlap: copies leave the streams they share with kernels, for a copy
// lane of their own per GPU and direction, as a program would put them on
// their own streams. What still orders them is what the DVDG says the data
// needs (analyzer/dvdg): a moved copy comes after the operations that
// produced what it reads (read after write), that last wrote what it
// overwrites (write after write), and that read what it overwrites (write
// after read); and an operation that reads, overwrites or wrote into what a
// moved copy touches comes after it. A kernel whose arguments were not
// captured has no edges in the DVDG, so copies keep their stream order with
// respect to it. The host still waits where it waited: a synchronization of
// a stream also waits for the copies moved off it (replay_graph.h).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

struct OverlapPlan {
  std::vector<bool> moved;                   // per op
  std::vector<std::vector<uint32_t>> data;   // per op: ops it must follow
  size_t moved_copies = 0;
};

OverlapPlan plan_overlap(const ReplayInput& input, const dvdg::Graph& graph);

}  // namespace apptracer::whatif
