// What a trace did, summed per thing two runs can both have (a kernel name,
// a copy path, an allocation kind, an NVTX range): the side of `apptracer
// diff` that reads one trace. Comparing two profiles is profile_diff.h's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/trace/packed_rows.h"
#include "analyzer/diff/device_labels.h"

namespace apptracer::diff {

struct ProfileKey {
  std::string category;  // "kernel", "copy path", "allocation", "nvtx range", ...
  std::string name;
  // Things of one route are the same work done another way: a copy path's
  // direction and devices, whatever host memory it used. Empty: no route.
  std::string route;

  friend bool operator<(const ProfileKey& a, const ProfileKey& b) {
    return std::tie(a.category, a.name, a.route) < std::tie(b.category, b.name, b.route);
  }
};

struct Profile {
  // What each entry sums, in order ("count", "time_ns", "bytes").
  std::vector<std::string> measures;
  std::map<ProfileKey, std::vector<int64_t>> entries;

  // The entry of `key`, made of zeros on first use.
  std::vector<int64_t>& entry(const ProfileKey& key);
};

// "HtoD pageable->device gpu0", "DtoD device->device gpu0->gpu1": the copy's
// direction, the memory kinds of both ends (pageable or pinned host memory
// is what decides a host copy's speed) and its devices.
std::string copy_path_name(const trace::Transfer& copy, const DeviceLabels& devices);
// The same copy's direction and devices only: its route.
std::string copy_route(const trace::Transfer& copy, const DeviceLabels& devices);

}  // namespace apptracer::diff
