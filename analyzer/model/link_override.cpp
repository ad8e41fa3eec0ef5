#include "analyzer/model/link_override.h"

#include <stdexcept>

namespace apptracer::model {

namespace {

constexpr const char* kUsage = "expected PATH=bw:GBPS,lat:US (e.g. HtoD.pinned=bw:50,lat:2)";

double positive_number(const std::string& text, const std::string& whole) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value >= 0)) {
    throw std::invalid_argument("--link " + whole + ": '" + text + "' is not a number; " + kUsage);
  }
  return value;
}

}  // namespace

LinkOverride parse_link_override(const std::string& text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw std::invalid_argument("--link " + text + ": " + kUsage);
  }
  LinkOverride change;
  change.pattern = text.substr(0, equals);
  std::string spec = text.substr(equals + 1);
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find(',', begin);
    std::string item = spec.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    size_t colon = item.find(':');
    std::string key = item.substr(0, colon);
    if (colon == std::string::npos || (key != "bw" && key != "lat")) {
      throw std::invalid_argument("--link " + text + ": '" + item + "' is neither bw:GBPS nor lat:US; " +
                                  kUsage);
    }
    double value = positive_number(item.substr(colon + 1), text);
    if (key == "bw") {
      if (value <= 0) throw std::invalid_argument("--link " + text + ": bandwidth must be above 0");
      change.bandwidth_gbps = value;
    } else {
      change.latency_ns = value * 1000;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return change;
}

std::vector<std::string> apply_link_override(SystemModel& system, const LinkOverride& change) {
  std::vector<std::string> changed;
  for (MeasuredPath& path : system.paths) {
    std::string name = path.path.name();
    if (!name_matches(name, change.pattern)) continue;
    path.model = path.model.with(change.latency_ns, change.bandwidth_gbps);
    changed.push_back(name);
  }
  if (!changed.empty()) return changed;
  std::optional<LinkPath> added = LinkPath::parse(change.pattern);
  if (!added) {
    throw std::invalid_argument("--link " + change.pattern +
                                ": no path of the system file has this name or starts with it");
  }
  if (!change.bandwidth_gbps || !change.latency_ns) {
    throw std::invalid_argument("--link " + change.pattern +
                                ": not measured on this system; give both bw and lat to add it");
  }
  MeasuredPath path;
  path.path = *added;
  path.model = LinkModel::constant(*change.latency_ns, *change.bandwidth_gbps);
  path.note = "added by --link";
  system.paths.push_back(path);
  return {change.pattern};
}

}  // namespace apptracer::model
