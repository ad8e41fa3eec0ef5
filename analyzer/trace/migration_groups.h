// Unified-memory migrations as the DVDG sees them: CUPTI reports one record
// per transfer (often thousands of 4 KiB..2 MiB pieces per kernel); the graph
// wants one migration per allocation, direction and causing operation.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/trace/unified_memory.h"

namespace apptracer::trace {

struct MigrationGroup {
  UmCause cause;
  int64_t alloc_id = 0;
  int64_t from = 0;  // residency: device ordinal or kHostResidency
  int64_t to = 0;
  int64_t bytes = 0;
  int64_t start_ns = 0;  // first record's start
  int64_t end_ns = 0;    // last record's end
  // The migration cause that moved most of the bytes (ties: the lower number).
  UmMigrationCause migration_cause = UmMigrationCause::Unknown;
};

// Migrations that resolved to an allocation, grouped; ordered by cause (kind,
// row), then allocation, then direction. Records in no known allocation
// (`__managed__` variables) have no place in the graph and are left out.
std::vector<MigrationGroup> group_migrations(const UmTrace& trace);

}  // namespace apptracer::trace
