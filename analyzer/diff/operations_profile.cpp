#include "analyzer/diff/operations_profile.h"

#include <unordered_map>

#include "apptracer/enums.h"
#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

enum OperationsMeasure { kCount, kGpuTime, kHostTime, kBytes };

void add(Profile& profile, const ProfileKey& key, OperationsMeasure time, int64_t time_ns, int64_t bytes) {
  std::vector<int64_t>& entry = profile.entry(key);
  entry[kCount] = saturating_add(entry[kCount], 1);
  entry[time] = saturating_add(entry[time], time_ns);
  entry[kBytes] = saturating_add(entry[kBytes], bytes);
}

int64_t gpu_time(trace::NullableInt start, trace::NullableInt end) {
  return start && end ? elapsed_ns(*start, *end) : 0;
}

// How long each allocation's call took on the host, by correlation id.
std::unordered_map<int64_t, int64_t> allocation_call_times(trace::Trace& trace) {
  std::unordered_map<int64_t, int64_t> times;
  for (const trace::Allocation& allocation : trace.operations().allocations()) {
    if (allocation.alloc_correlation()) times.emplace(*allocation.alloc_correlation(), 0);
  }
  if (times.empty()) return times;
  for (const auto& call : trace.rows<ApiCallRow>()) {
    auto found = times.find(call.correlation_id);
    if (found != times.end()) found->second = elapsed_ns(call.start_ns, call.end_ns);
  }
  return times;
}

}  // namespace

Profile operations_profile(trace::Trace& trace, const DeviceLabels& devices) {
  Profile profile;
  profile.measures = {"count", "time_ns", "host_ns", "bytes"};
  const trace::TraceOperations& ops = trace.operations();
  for (const trace::Kernel& kernel : ops.kernels()) {
    trace::NullableInt name = kernel.row->demangled_id ? kernel.row->demangled_id : kernel.row->name_id;
    add(profile, {"kernel", std::string(trace.string(name, "?")), ""}, kGpuTime,
        gpu_time(kernel.row->gpu_start_ns, kernel.row->gpu_end_ns), 0);
  }
  for (const trace::Transfer& copy : ops.copies()) {
    add(profile, {"copy path", copy_path_name(copy, devices), copy_route(copy, devices)}, kGpuTime,
        gpu_time(copy.gpu_start_ns(), copy.gpu_end_ns()), copy.bytes());
  }
  for (const trace::Transfer& memset : ops.memsets()) {
    std::string device = memset.device() ? " " + devices(memset.device()) : "";
    add(profile, {"memset", std::string(to_string(memset.dst_memory())) + device, ""}, kGpuTime,
        gpu_time(memset.gpu_start_ns(), memset.gpu_end_ns()), memset.bytes());
  }
  std::unordered_map<int64_t, int64_t> call_times = allocation_call_times(trace);
  for (const trace::Allocation& allocation : ops.allocations()) {
    int64_t time_ns = 0;
    if (allocation.alloc_correlation()) time_ns = call_times[*allocation.alloc_correlation()];
    add(profile, {"allocation", std::string(to_string(allocation.kind())), ""}, kHostTime, time_ns,
        allocation.bytes());
  }
  for (const auto& collective : trace.rows<CollectiveRow>()) {
    add(profile, {"collective", std::string(to_string(collective.kind)), ""}, kGpuTime,
        gpu_time(collective.gpu_start_ns, collective.gpu_end_ns),
        collective.send_bytes.value_or(collective.recv_bytes.value_or(0)));
  }
  return profile;
}

}  // namespace apptracer::diff
