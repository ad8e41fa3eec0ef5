// The two-run scheme of `record --exact`, for where CUPTI and the Compute
// Sanitizer do not work in one process (exact_probe.h): the program runs
// once normally (the trace) and once under the sanitizer alone (its exact
// ranges, resolved into the allocations the sanitizer reported). This joins
// the second into the first:
//   - launches by order: the n-th launch of the sanitizer run is the n-th
//     kernels row of the normal run (by call, then GPU start); the counts and
//     the names must agree, else the runs diverged and nothing is joined;
//   - allocations by memory kind, size and order among those alike; ranges
//     move to the normal run's addresses. Ranges in no matched allocation keep
//     the sanitizer run's addresses and no allocation (counted in meta).
// Processes pair up by command line and start order.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apptracer/sqlite.h"

namespace apptracer {

// The runs cannot be joined; the message says why in one line.
class ExactJoinError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExactJoinSummary {
  int64_t launches = 0;
  int64_t ranges = 0;
  int64_t unmatched_ranges = 0;  // in no allocation matched between the runs
};

// Adds the sanitizer run's exact_launches and exact_accesses to `normal`
// (which must have none yet) in one transaction. Throws ExactJoinError.
ExactJoinSummary join_exact_runs(Database& normal, Database& sanitizer);

// Pairs each normal run's trace with the sanitizer run's trace of the same
// process (processes that launched no kernel need none). Throws
// ExactJoinError when the runs started different processes.
std::vector<std::pair<std::string, std::string>> pair_run_traces(
    const std::vector<std::string>& normal, const std::vector<std::string>& sanitizer);

}  // namespace apptracer
