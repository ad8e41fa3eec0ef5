#include "analyzer/model/link_path.h"

#include <charconv>
#include <vector>

namespace apptracer::model {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// "gpu3" -> 3 for prefix "gpu"; nullopt when it is not that.
std::optional<int> numbered(std::string_view part, std::string_view prefix) {
  if (part.substr(0, prefix.size()) != prefix || part.size() == prefix.size()) return std::nullopt;
  int value = 0;
  const char* first = part.data() + prefix.size();
  const char* last = part.data() + part.size();
  auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last || value < 0) return std::nullopt;
  return value;
}

std::string gpu(int device) { return "gpu" + std::to_string(device); }

}  // namespace

std::string LinkPath::name() const {
  switch (kind) {
    case LinkKind::HtoD:
    case LinkKind::DtoH: {
      std::string text = kind == LinkKind::HtoD ? "HtoD." : "DtoH.";
      text += host == HostMemory::Pinned ? "pinned." : host == HostMemory::Fresh ? "fresh." : "pageable.";
      if (numa_node >= 0) text += "node" + std::to_string(numa_node) + ".";
      return text + gpu(device);
    }
    case LinkKind::DtoD: return "DtoD." + gpu(device);
    case LinkKind::PeerDirect: return "PtoP.peer." + gpu(device) + "." + gpu(peer);
    case LinkKind::PeerStaged: return "PtoP.staged." + gpu(device) + "." + gpu(peer);
    case LinkKind::PrefetchHtoD: return "prefetch.HtoD." + gpu(device);
    case LinkKind::PrefetchDtoH: return "prefetch.DtoH." + gpu(device);
    case LinkKind::FaultHtoD: return "fault.HtoD." + gpu(device);
  }
  return "?";
}

std::optional<LinkPath> LinkPath::parse(std::string_view name) {
  std::vector<std::string_view> parts = split(name, '.');
  LinkPath path;
  auto device_at = [&](size_t index) {
    std::optional<int> device = index < parts.size() ? numbered(parts[index], "gpu") : std::nullopt;
    if (device) path.device = *device;
    return device.has_value();
  };
  if ((parts[0] == "HtoD" || parts[0] == "DtoH") && (parts.size() == 3 || parts.size() == 4)) {
    path.kind = parts[0] == "HtoD" ? LinkKind::HtoD : LinkKind::DtoH;
    if (parts[1] == "pinned") {
      path.host = HostMemory::Pinned;
    } else if (parts[1] == "pageable") {
      path.host = HostMemory::Pageable;
    } else if (parts[1] == "fresh" && path.kind == LinkKind::DtoH) {
      path.host = HostMemory::Fresh;
    } else {
      return std::nullopt;
    }
    if (parts.size() == 4) {
      std::optional<int> node = numbered(parts[2], "node");
      if (!node) return std::nullopt;
      path.numa_node = *node;
    }
    return device_at(parts.size() - 1) ? std::optional<LinkPath>(path) : std::nullopt;
  }
  if (parts[0] == "DtoD" && parts.size() == 2) {
    path.kind = LinkKind::DtoD;
    return device_at(1) ? std::optional<LinkPath>(path) : std::nullopt;
  }
  if (parts[0] == "PtoP" && parts.size() == 4 && (parts[1] == "peer" || parts[1] == "staged")) {
    path.kind = parts[1] == "peer" ? LinkKind::PeerDirect : LinkKind::PeerStaged;
    std::optional<int> peer = numbered(parts[3], "gpu");
    if (!device_at(2) || !peer || *peer == path.device) return std::nullopt;
    path.peer = *peer;
    return path;
  }
  if ((parts[0] == "prefetch" || parts[0] == "fault") && parts.size() == 3) {
    if (parts[0] == "prefetch" && parts[1] == "HtoD") {
      path.kind = LinkKind::PrefetchHtoD;
    } else if (parts[0] == "prefetch" && parts[1] == "DtoH") {
      path.kind = LinkKind::PrefetchDtoH;
    } else if (parts[0] == "fault" && parts[1] == "HtoD") {
      path.kind = LinkKind::FaultHtoD;
    } else {
      return std::nullopt;
    }
    return device_at(2) ? std::optional<LinkPath>(path) : std::nullopt;
  }
  return std::nullopt;
}

bool name_matches(std::string_view name, std::string_view pattern) {
  if (name.substr(0, pattern.size()) != pattern) return false;
  return name.size() == pattern.size() || name[pattern.size()] == '.';
}

}  // namespace apptracer::model
