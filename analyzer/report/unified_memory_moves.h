// Unified-memory migrations as the report draws them: each one's path (the
// managed-memory path of its direction and device, the one the link model
// fits prefetches on) and GPU-side time, beside the program's copies.
#pragma once

#include <vector>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::report {

struct Migration {
  diagnose::TransferPath path;
  int64_t bytes = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Every migration of the trace (on demand and prefetched), in time order.
std::vector<Migration> migrations(const diagnose::TraceFacts& facts);

}  // namespace apptracer::report
