// The tracer's own time as `tracer_time` rows (base/self_cost.h): for each
// stretch of the run, what each site's totals gained in it. A stretch ends
// at the first writer pass at least kStretchNs after it began, so a long run
// has a few rows a second, enough to tell start-up from the steady steps.
#pragma once

#include <cstdint>
#include <vector>

#include "apptracer/tables.h"
#include "base/self_cost.h"

namespace apptracer {

class TracerTimeRows {
 public:
  static constexpr uint64_t kStretchNs = 50'000'000;

  // A stretch from `start_ns`, counting what the totals gain from now.
  explicit TracerTimeRows(uint64_t start_ns) { restart(start_ns); }
  // Forgets what the totals hold (a forked child's are its parent's).
  void restart(uint64_t start_ns);

  // The rows of the stretch ending at `now_ns`: none until it is long
  // enough, unless it is the last.
  std::vector<TracerTimeRow> take(uint64_t now_ns, bool last);

 private:
  uint64_t start_ns_ = 0;
  uint64_t calls_[self_cost::kSiteCount] = {};
  uint64_t ns_[self_cost::kSiteCount] = {};
};

}  // namespace apptracer
