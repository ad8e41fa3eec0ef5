#include "apptracer/um_counter_groups.h"

#include <algorithm>

namespace apptracer {

namespace {

// What a group costs the program where it pages on demand (bench/RESULTS.md,
// "Unified memory": a 2 GiB array read by a kernel after the CPU wrote it, on
// the H200): the migration byte counters halve on-demand migration (10.5 ->
// 5.1 GiB/s), each page-fault group takes 6%. The default keeps on-demand
// migration as fast as untraced; the rest is asked for by name.
struct Group {
  const char* name;
  std::vector<UmCounterKind> kinds;
  bool by_default;
};

const std::vector<Group>& groups() {
  static const std::vector<Group> all = {
      {"migrations", {UmCounterKind::BytesHtoD, UmCounterKind::BytesDtoH, UmCounterKind::BytesDtoD}, false},
      {"cpu-faults", {UmCounterKind::CpuPageFault}, false},
      {"gpu-faults", {UmCounterKind::GpuPageFault}, false},
      {"thrashing", {UmCounterKind::Thrashing}, true},
      {"throttling", {UmCounterKind::Throttling}, true},
      {"remote-map", {UmCounterKind::RemoteMap}, true},
  };
  return all;
}

}  // namespace

std::optional<std::vector<UmCounterKind>> um_counter_kinds(const std::string& spec) {
  std::vector<UmCounterKind> kinds;
  std::string list = spec.empty() ? "default" : spec;
  for (size_t at = 0; at <= list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    std::string name = list.substr(at, comma - at);
    at = comma + 1;
    if (name == "off") continue;
    bool known = name == "default" || name == "all";
    for (const Group& group : groups()) {
      if (name == group.name || name == "all" || (name == "default" && group.by_default)) {
        kinds.insert(kinds.end(), group.kinds.begin(), group.kinds.end());
        known = true;
      }
    }
    if (!known) return std::nullopt;
  }
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  return kinds;
}

std::string um_counter_group_names() {
  std::string names = "default, all, off";
  for (const Group& group : groups()) names += std::string(", ") + group.name;
  return names;
}

}  // namespace apptracer
