#include "analyzer/diff/profile.h"

#include "apptracer/enums.h"

namespace apptracer::diff {

namespace {

std::string copy_devices(const trace::Transfer& copy, const DeviceLabels& devices) {
  trace::NullableInt src = copy.source().device, dst = copy.destination().device;
  if (src && dst && *src != *dst) return devices(src) + "->" + devices(dst);
  return devices(dst ? dst : src);
}

}  // namespace

std::vector<int64_t>& Profile::entry(const ProfileKey& key) {
  auto [found, added] = entries.try_emplace(key);
  if (added) found->second.assign(measures.size(), 0);
  return found->second;
}

std::string copy_path_name(const trace::Transfer& copy, const DeviceLabels& devices) {
  return std::string(to_string(copy.kind())) + " " + std::string(to_string(copy.src_memory())) + "->" +
         std::string(to_string(copy.dst_memory())) + " " + copy_devices(copy, devices);
}

std::string copy_route(const trace::Transfer& copy, const DeviceLabels& devices) {
  return std::string(to_string(copy.kind())) + " " + copy_devices(copy, devices);
}

}  // namespace apptracer::diff
