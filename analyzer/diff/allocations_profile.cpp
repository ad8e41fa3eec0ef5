#include "allocations_profile.h"

#include <unordered_map>

#include "apptracer/enums.h"
#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

enum Measure { kCount, kHostTime, kBytes };

// How long each allocation's call took on the host, by correlation id.
std::unordered_map<int64_t, int64_t> allocation_call_times(trace::Trace& trace) {
  std::unordered_map<int64_t, int64_t> times;
  for (const auto& allocation : trace.rows<AllocationRow>()) {
    if (allocation.alloc_correlation_id) times.emplace(*allocation.alloc_correlation_id, 0);
  }
  if (times.empty()) return times;
  for (const auto& call : trace.rows<ApiCallRow>()) {
    auto found = times.find(call.correlation_id);
    if (found != times.end()) found->second = elapsed_ns(call.start_ns, call.end_ns);
  }
  return times;
}

}  // namespace

Profile allocations_profile(trace::Trace& trace) {
  Profile profile;
  profile.measures = {"count", "host_ns", "bytes"};
  std::unordered_map<int64_t, int64_t> call_times = allocation_call_times(trace);
  for (const auto& allocation : trace.rows<AllocationRow>()) {
    std::vector<int64_t>& entry = profile.entry({"allocation", std::string(to_string(allocation.kind)), ""});
    entry[kCount] = saturating_add(entry[kCount], 1);
    if (allocation.alloc_correlation_id) {
      entry[kHostTime] = saturating_add(entry[kHostTime], call_times[*allocation.alloc_correlation_id]);
    }
    entry[kBytes] = saturating_add(entry[kBytes], allocation.bytes);
  }
  return profile;
}

}  // namespace apptracer::diff
