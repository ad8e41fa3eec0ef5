// `record --exact` stores in each trace it wrote how much the Compute
// Sanitizer saw of every linked launch (exact_coverage, decided by
// analyzer/trace/exact_coverage.h), for SQL and every reader of the trace.
#pragma once

#include <cstdint>

#include "apptracer/sqlite.h"

namespace apptracer {

struct StoredCoverage {
  int64_t launches = 0;
  int64_t launches_exact = 0;
};

// Replaces the trace's exact_coverage rows in one transaction; a trace
// without exact data gets none.
StoredCoverage store_exact_coverage(Database& db);

}  // namespace apptracer
