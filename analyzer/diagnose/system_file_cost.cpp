#include "system_file_cost.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace apptracer::diagnose {

namespace {

template <typename E>
E enum_named(const std::string& text, const std::string& what, const std::string& source) {
  for (const EnumValue& value : all_enum_values()) {
    if (std::string(value.enum_name) == EnumInfo<E>::name && text == value.name)
      return static_cast<E>(value.value);
  }
  throw std::runtime_error(source + ": unknown " + what + " '" + text + "'");
}

}  // namespace

std::vector<SystemPath> parse_system_file(const std::string& text, const std::string& source) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(source + ": not JSON (" + error.what() + ")");
  }
  if (!document.is_object() || !document.contains("paths") || !document["paths"].is_array()) {
    throw std::runtime_error(source +
                             ": not a system file (no \"paths\" array); write one with "
                             "'apptracer links -o system.json'");
  }
  std::vector<SystemPath> paths;
  try {
    for (const nlohmann::json& entry : document["paths"]) {
      SystemPath path;
      path.path.kind = enum_named<CopyKind>(entry.at("kind").get<std::string>(), "kind", source);
      path.path.host_memory = enum_named<MemoryKind>(
          entry.value("host_memory", std::string("device")), "host_memory", source);
      if (entry.contains("device") && !entry["device"].is_null())
        path.path.device = entry["device"].get<int64_t>();
      if (entry.contains("numa_node") && !entry["numa_node"].is_null())
        path.path.numa_node = entry["numa_node"].get<int64_t>();
      path.latency_ns = entry.at("latency_ns").get<double>();
      for (const nlohmann::json& piece : entry.at("bandwidth")) {
        double gbps = piece.at("gbps").get<double>();
        if (gbps <= 0) throw std::runtime_error(source + ": a bandwidth must be positive");
        path.bandwidth.emplace_back(piece.value("from_bytes", int64_t{0}), gbps);
      }
      if (path.bandwidth.empty())
        throw std::runtime_error(source + ": a path without bandwidth");
      std::sort(path.bandwidth.begin(), path.bandwidth.end());
      paths.push_back(std::move(path));
    }
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(source + ": malformed path entry (" + error.what() + ")");
  }
  return paths;
}

SystemFileCost::SystemFileCost(const std::string& path) : source_(path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the system file");
  std::stringstream text;
  text << in.rdbuf();
  paths_ = parse_system_file(text.str(), path);
}

SystemFileCost::SystemFileCost(std::string source, std::vector<SystemPath> paths)
    : source_(std::move(source)), paths_(std::move(paths)) {}

const SystemPath* SystemFileCost::find(const TransferPath& wanted) const {
  const SystemPath* best = nullptr;
  int best_score = INT_MIN;
  for (const SystemPath& entry : paths_) {
    const TransferPath& p = entry.path;
    if (p.kind != wanted.kind || p.host_memory != wanted.host_memory) continue;
    if (p.device && wanted.device && *p.device != *wanted.device) continue;
    if (p.numa_node && wanted.numa_node && *p.numa_node != *wanted.numa_node) continue;
    // Same device and node count for an entry; an entry measured on one NUMA
    // node (or device) is a worse match for a transfer whose node is unknown
    // than one measured for any.
    int score = (p.device && wanted.device ? 2 : 0) + (p.numa_node && wanted.numa_node ? 2 : 0) -
                (p.numa_node && !wanted.numa_node ? 3 : 0) - (p.device && !wanted.device ? 1 : 0);
    if (score > best_score) {
      best = &entry;
      best_score = score;
    }
  }
  return best;
}

std::optional<double> SystemFileCost::time_ns(const TransferPath& path, int64_t bytes) const {
  const SystemPath* entry = find(path);
  if (!entry) return std::nullopt;
  double gbps = entry->bandwidth.front().second;
  for (const auto& [from, piece] : entry->bandwidth) {
    if (from <= bytes) gbps = piece;
  }
  return entry->latency_ns + static_cast<double>(bytes) / gbps;
}

std::string SystemFileCost::describe(const TransferPath& path) const {
  const SystemPath* entry = find(path);
  if (!entry) return source_ + " has no " + path_name(path) + " path";
  char text[200];
  std::snprintf(text, sizeof text, "system file %s: %s up to %.2f GB/s, %.1f us latency",
                source_.c_str(), path_name(path).c_str(), entry->bandwidth.back().second,
                entry->latency_ns / 1e3);
  return text;
}

}  // namespace apptracer::diagnose
