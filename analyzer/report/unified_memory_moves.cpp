#include "unified_memory_moves.h"

namespace apptracer::report {

std::vector<Migration> migrations(const diagnose::TraceFacts& facts) {
  std::vector<Migration> moves;
  for (const trace::UmEvent& event : facts.um.events) {
    if (!event.is_migration()) continue;
    Migration move;
    bool to_device = event.dst != trace::kHostResidency;
    bool from_device = event.src != trace::kHostResidency;
    move.path.kind = to_device ? (from_device ? CopyKind::DtoD : CopyKind::HtoD) : CopyKind::DtoH;
    move.path.host_memory = MemoryKind::Managed;
    move.path.device = to_device ? event.dst : event.src;
    move.bytes = event.bytes;
    move.start_ns = event.start_ns;
    move.end_ns = event.end_ns;
    moves.push_back(move);
  }
  return moves;
}

}  // namespace apptracer::report
