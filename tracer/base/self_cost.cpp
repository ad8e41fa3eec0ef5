#include "base/self_cost.h"

#include <algorithm>

namespace apptracer::self_cost {

bool enabled = false;
Totals totals[static_cast<size_t>(Site::kCount)];

namespace {

constexpr const char* kKeys[] = {
#define APPTRACER_COST_SITE_KEY(name, key) key,
    APPTRACER_COST_SITES(APPTRACER_COST_SITE_KEY)
#undef APPTRACER_COST_SITE_KEY
};

// What timing an empty scope costs on this machine: the best of a few runs
// of a thousand timers on a counter of its own (contention-free, as the
// sites are in a single-threaded program).
uint64_t timer_ns() {
  Totals scratch;
  uint64_t best = UINT64_MAX;
  for (int run = 0; run < 5; ++run) {
    uint64_t start = monotonic_ns();
    for (int i = 0; i < 1000; ++i) {
      uint64_t begin = monotonic_ns();
      scratch.calls.fetch_add(1, std::memory_order_relaxed);
      scratch.ns.fetch_add(monotonic_ns() - begin, std::memory_order_relaxed);
    }
    best = std::min(best, (monotonic_ns() - start) / 1000);
  }
  return best;
}

}  // namespace

std::string json(uint64_t writer_cpu_ns) {
  std::string out = "{";
  for (size_t i = 0; i < static_cast<size_t>(Site::kCount); ++i) {
    out += "\"" + std::string(kKeys[i]) + "\": {\"calls\": " +
           std::to_string(totals[i].calls.load(std::memory_order_relaxed)) +
           ", \"ns\": " + std::to_string(totals[i].ns.load(std::memory_order_relaxed)) + "}, ";
  }
  return out + "\"writer_cpu_ns\": " + std::to_string(writer_cpu_ns) +
         ", \"timer_ns\": " + std::to_string(timer_ns()) + "}";
}

}  // namespace apptracer::self_cost
