#include "profile.h"

#include "apptracer/enums.h"

namespace apptracer::diff {

namespace {

std::string gpu(const trace::NullableInt& device) {
  return device ? "gpu" + std::to_string(*device) : "host";
}

std::string copy_devices(const trace::Packed<MemcpyRow>& copy) {
  if (copy.src_device && copy.dst_device && *copy.src_device != *copy.dst_device) {
    return gpu(copy.src_device) + "->" + gpu(copy.dst_device);
  }
  return gpu(copy.dst_device ? copy.dst_device : copy.src_device);
}

}  // namespace

std::vector<int64_t>& Profile::entry(const ProfileKey& key) {
  auto [found, added] = entries.try_emplace(key);
  if (added) found->second.assign(measures.size(), 0);
  return found->second;
}

std::string copy_path_name(const trace::Packed<MemcpyRow>& copy) {
  return std::string(to_string(copy.kind)) + " " + std::string(to_string(copy.src_memory)) + "->" +
         std::string(to_string(copy.dst_memory)) + " " + copy_devices(copy);
}

std::string copy_route(const trace::Packed<MemcpyRow>& copy) {
  return std::string(to_string(copy.kind)) + " " + copy_devices(copy);
}

}  // namespace apptracer::diff
