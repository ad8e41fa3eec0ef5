#include "analyzer/report/unified_memory_moves.h"

namespace apptracer::report {

std::vector<Migration> migrations(const diagnose::TraceFacts& facts) {
  std::vector<Migration> moves;
  for (const trace::UmEvent& event : facts.um.events) {
    if (!event.is_migration()) continue;
    Migration move;
    move.path = diagnose::migration_path(event.src, event.dst);
    move.bytes = event.bytes;
    move.start_ns = event.start_ns;
    move.end_ns = event.end_ns;
    moves.push_back(move);
  }
  return moves;
}

}  // namespace apptracer::report
