#include "operations_profile.h"

#include "apptracer/enums.h"
#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

enum Measure { kCount, kTime, kBytes };

void add(Profile& profile, const ProfileKey& key, int64_t time_ns, int64_t bytes) {
  std::vector<int64_t>& entry = profile.entry(key);
  entry[kCount] = saturating_add(entry[kCount], 1);
  entry[kTime] = saturating_add(entry[kTime], time_ns);
  entry[kBytes] = saturating_add(entry[kBytes], bytes);
}

int64_t gpu_time(trace::NullableInt start, trace::NullableInt end) {
  return start && end ? elapsed_ns(*start, *end) : 0;
}

}  // namespace

Profile operations_profile(trace::Trace& trace, const DeviceLabels& devices) {
  Profile profile;
  profile.measures = {"count", "time_ns", "bytes"};
  for (const auto& kernel : trace.rows<KernelRow>()) {
    trace::NullableInt name = kernel.demangled_id ? kernel.demangled_id : kernel.name_id;
    add(profile, {"kernel", std::string(trace.string(name, "?")), ""},
        gpu_time(kernel.gpu_start_ns, kernel.gpu_end_ns), 0);
  }
  for (const auto& copy : trace.rows<MemcpyRow>()) {
    add(profile, {"copy path", copy_path_name(copy, devices), copy_route(copy, devices)},
        gpu_time(copy.gpu_start_ns, copy.gpu_end_ns), copy.bytes);
  }
  for (const auto& memset : trace.rows<MemsetRow>()) {
    std::string device = memset.device ? " " + devices(memset.device) : "";
    add(profile, {"memset", std::string(to_string(memset.memory)) + device, ""},
        gpu_time(memset.gpu_start_ns, memset.gpu_end_ns), memset.bytes);
  }
  for (const auto& collective : trace.rows<CollectiveRow>()) {
    add(profile, {"collective", std::string(to_string(collective.kind)), ""},
        gpu_time(collective.gpu_start_ns, collective.gpu_end_ns),
        collective.send_bytes.value_or(collective.recv_bytes.value_or(0)));
  }
  return profile;
}

}  // namespace apptracer::diff
