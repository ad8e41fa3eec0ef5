#include "analyzer/dvdg/graph.h"

#include <algorithm>

namespace apptracer::dvdg {

std::string_view to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Data: return "data";
    case EdgeKind::Carry: return "carry";
    case EdgeKind::Migration: return "migration";
  }
  return "?";
}

int16_t Graph::residency(uint32_t value) const {
  auto found = std::lower_bound(
      managed_residency.begin(), managed_residency.end(), value,
      [](const std::pair<uint32_t, int16_t>& held, uint32_t wanted) { return held.first < wanted; });
  return found != managed_residency.end() && found->first == value ? found->second : kNoResidency;
}

size_t Graph::dependence_count() const {
  size_t count = listed_edges.size();
  for (uint32_t op = 0; op < ops.size(); ++op) {
    if (ops[op].kind != OpKind::Kernel) continue;
    count += size_t{op_reads_begin[op + 1] - op_reads_begin[op]} *
             (op_writes_begin[op + 1] - op_writes_begin[op]);
  }
  return count;
}

size_t Graph::edge_count() const {
  size_t count = listed_edges.size();
  for (uint32_t op = 0; op < ops.size(); ++op) {
    if (ops[op].kind != OpKind::Kernel) continue;
    size_t reads = op_reads_begin[op + 1] - op_reads_begin[op];
    size_t writes = op_writes_begin[op + 1] - op_writes_begin[op];
    if (!ops[op].access_set) {
      count += reads * writes;
      continue;
    }
    size_t in_set = 0;
    for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r) in_set += op_reads_in_set[r];
    count += (reads - in_set) * writes + in_set + writes;
  }
  return count;
}

size_t Graph::access_set_count() const {
  size_t count = 0;
  for (const Op& op : ops) count += op.access_set;
  return count;
}

}  // namespace apptracer::dvdg
