#include "analyzer/model/system_model.h"

#include <map>

namespace apptracer::model {

const MeasuredPath* SystemModel::find(const LinkPath& path) const {
  for (const MeasuredPath& measured : paths) {
    if (measured.path == path) return &measured;
  }
  return nullptr;
}

MeasuredPath* SystemModel::find(const LinkPath& path) {
  return const_cast<MeasuredPath*>(static_cast<const SystemModel*>(this)->find(path));
}

int SystemModel::nearest_node(int device) const {
  for (const GpuInfo& gpu : machine.gpus) {
    if (gpu.ordinal == device) return gpu.numa_node;
  }
  return -1;
}

ResolvedPath SystemModel::resolve(const LinkPath& wanted) const {
  if (const MeasuredPath* exact = find(wanted)) return {exact, true};
  auto gpu_name = [&](int device) -> std::string {
    for (const GpuInfo& gpu : machine.gpus) {
      if (gpu.ordinal == device) return gpu.name;
    }
    return "";
  };
  std::string wanted_name = gpu_name(wanted.device);
  const MeasuredPath* best = nullptr;
  int best_score = -1;
  for (const MeasuredPath& candidate : paths) {
    const LinkPath& path = candidate.path;
    if (path.kind != wanted.kind || path.host != wanted.host) continue;
    int score = 0;
    if (path.device == wanted.device) {
      score += 8;
    } else if (!wanted_name.empty() && gpu_name(path.device) == wanted_name) {
      score += 4;
    }
    if (path.peer == wanted.peer) score += 4;
    // A node that was not measured (or a trace's node this machine lacks)
    // is best stood for by the node a program on that GPU would use.
    if (path.numa_node == wanted.numa_node) {
      score += 2;
    } else if (path.numa_node == nearest_node(path.device)) {
      score += 1;
    }
    if (score > best_score) {
      best = &candidate;
      best_score = score;
    }
  }
  return {best, false};
}

std::optional<double> SystemModel::transfer_ns(const LinkPath& wanted, int64_t bytes) const {
  ResolvedPath resolved = resolve(wanted);
  if (!resolved.path) return std::nullopt;
  return resolved.path->model.transfer_ns(bytes);
}

std::string SystemModel::describe() const {
  std::map<std::string, int> gpus;
  for (const GpuInfo& gpu : machine.gpus) ++gpus[gpu.name];
  std::string text = machine.hostname.empty() ? "unnamed machine" : machine.hostname;
  std::string inside;
  for (const auto& [name, count] : gpus) {
    inside += (inside.empty() ? "" : ", ") + std::to_string(count) + "x " + name;
  }
  if (!machine.measured_at.empty()) inside += (inside.empty() ? "" : ", ") + machine.measured_at;
  return inside.empty() ? text : text + " (" + inside + ")";
}

}  // namespace apptracer::model
