// --exact records -> rows of exact_launches and exact_accesses. A launch's
// ranges are split where allocations begin and end (as they were when it
// was launched), so each row lies in one allocation, or in none.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"
#include "store/address_resolver.h"

namespace apptracer {

class ExactRows {
 public:
  ExactRows(Database& db, AddressResolver& resolver);

  void write_launch(const Record& r);
  void write_intervals(const Record& r);
  void flush();

  // Once kernels rows are all stored: links each launch to its kernels row
  // (same call_correlation_id; a graph launch's kernels by position) and
  // returns what meta says about the recording (exact.* keys).
  std::vector<std::pair<std::string, std::string>> finish();

 private:
  void add_range(int64_t launch_id, uint64_t ns, uint64_t lo, uint64_t hi, AccessKind access,
                 bool approximate);

  Database& db_;
  AddressResolver& resolver_;
  BatchInserter<ExactLaunchRow> launches_;
  BatchInserter<ExactAccessRow> accesses_;
  // Launches whose ranges are still to come, by index.
  struct Pending {
    uint64_t ns;           // launched then: addresses resolve as of this time
    uint32_t remaining;    // ranges
  };
  std::unordered_map<uint64_t, Pending> pending_;
};

}  // namespace apptracer
