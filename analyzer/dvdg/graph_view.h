// The part of a graph a person or program asked to see. Filters select
// operations and values; collapsing folds repeated iterations of the same
// operation sequence into their first iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

struct ViewFilter {
  std::optional<int64_t> from_ns;  // operations that end before this are hidden
  std::optional<int64_t> to_ns;    // operations that start after this are hidden
  // Operations issued inside any of these [start, end] intervals (NVTX ranges).
  std::vector<std::pair<int64_t, int64_t>> issue_windows;
  std::vector<int64_t> alloc_ids;  // only edges touching these allocations
  std::optional<int64_t> device;   // only operations on this device
  int64_t min_bytes = 0;           // hide values of smaller locations
  bool collapse_iterations = false;
  // Only the first `value_limit` values shown (by id) and the edges between
  // them, for a page that draws that many; every value shown is counted.
  size_t value_limit = SIZE_MAX;
  // The graph's held edges, an op's access set a node of its own (graph.h),
  // rather than every dependence.
  bool access_sets = false;
};

// An edge as shown: endpoints may be remapped by collapsing. An endpoint
// kAccessSet is the access set of the edge's op.
struct ViewEdge {
  uint32_t src_value;
  uint32_t dst_value;
  Edge edge;  // as the graph has it: op, kind, bytes
};

struct GraphView {
  std::vector<uint32_t> values;  // ascending; the first value_limit shown
  size_t values_shown = 0;       // all of them (a training trace shows millions)
  std::vector<uint32_t> ops;     // ascending (program order)
  std::vector<uint32_t> access_sets;  // the ops whose access set is shown, ascending
  std::vector<ViewEdge> edges;
  // Per op: how many iterations it stands for (1 unless collapsed into it).
  std::vector<uint32_t> repeats;
};

GraphView make_view(const Graph& graph, const ViewFilter& filter);

}  // namespace apptracer::dvdg
