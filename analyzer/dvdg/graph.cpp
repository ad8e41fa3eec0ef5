#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

std::string_view to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Data: return "data";
    case EdgeKind::Carry: return "carry";
    case EdgeKind::Migration: return "migration";
  }
  return "?";
}

size_t Graph::edge_count() const {
  size_t count = listed_edges.size();
  for (uint32_t op = 0; op < ops.size(); ++op) {
    if (ops[op].kind != OpKind::Kernel) continue;
    count += size_t{op_reads_begin[op + 1] - op_reads_begin[op]} *
             (op_writes_begin[op + 1] - op_writes_begin[op]);
  }
  return count;
}

}  // namespace apptracer::dvdg
