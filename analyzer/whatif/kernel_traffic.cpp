#include "analyzer/whatif/kernel_traffic.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "apptracer/saturating.h"

namespace apptracer::whatif {

namespace {

// The measured path that prices `path` on `system` ("" none) and the time
// `bytes` take at its bandwidth: a kernel streams them, no transfer's
// latency is paid.
std::pair<std::string, double> price(const model::SystemModel& system, const model::LinkPath& path,
                                     int64_t bytes) {
  model::ResolvedPath resolved = system.resolve(path);
  if (!resolved.path) return {"", 0.0};
  double gbps = resolved.path->model.bandwidth_gbps(bytes);
  if (gbps <= 0) return {"", 0.0};
  return {resolved.path->path.name(), static_cast<double>(bytes) / gbps};
}

}  // namespace

KernelTraffic::KernelTraffic(std::vector<trace::RemoteTraffic> traffic, const model::SystemModel& baseline,
                             const model::SystemModel& whatif, std::optional<int> numa_node)
    : traffic_(std::move(traffic)) {
  prices_.reserve(traffic_.size());
  for (const trace::RemoteTraffic& t : traffic_) {
    model::LinkPath moved = t.path;
    if (numa_node && moved.host == model::HostMemory::Pinned) moved.numa_node = *numa_node;
    TrafficPrice p;
    p.whatif_path = moved.name();
    std::tie(p.baseline_by, p.baseline_ns) = price(baseline, t.path, t.bytes);
    std::tie(p.whatif_by, p.whatif_ns) = price(whatif, moved, t.bytes);
    if (p.priced()) {
      std::pair<double, double>& kernel = kernels_[t.kernel_id];
      kernel.first += p.baseline_ns;
      kernel.second += p.whatif_ns;
    }
    prices_.push_back(std::move(p));
  }
}

double KernelTraffic::kernel_ns(int64_t kernel_id, double own_ns) const {
  auto found = kernels_.find(kernel_id);
  if (found == kernels_.end()) return own_ns;
  auto [baseline_ns, whatif_ns] = found->second;
  double without_traffic = std::max(0.0, own_ns - baseline_ns);
  return std::max(without_traffic, own_ns + whatif_ns - baseline_ns);
}

std::vector<TransferSummary> kernel_traffic_summaries(const KernelTraffic& traffic, const ReplayInput& input,
                                                      const ReplayGraph& graph, const RecordedTiming& recorded) {
  std::unordered_map<int64_t, uint32_t> kernel_ops;  // kernels.id -> op
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    if (input.ops[i].kind == OpKind::Kernel) kernel_ops.emplace(input.ops[i].source_id, i);
  }
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, bool>;
  std::map<Key, TransferSummary> groups;
  for (size_t i = 0; i < traffic.traffic().size(); ++i) {
    const trace::RemoteTraffic& t = traffic.traffic()[i];
    const TrafficPrice& p = traffic.prices()[i];
    auto op = kernel_ops.find(t.kernel_id);
    if (op == kernel_ops.end()) continue;
    std::string path = t.path.name();
    std::string kind = trace::traffic_kind(t);
    TransferSummary& summary = groups[{path, kind, p.baseline_by, p.whatif_path, p.whatif_by, !t.exact}];
    summary.path = path;
    summary.kind = kind;
    summary.kernel_traffic = true;
    summary.bytes_bound = !t.exact;
    summary.baseline_by = p.baseline_by;
    summary.whatif_path = p.whatif_path;
    summary.whatif_by = p.whatif_by;
    uint32_t node = graph.op_node(op->second);
    ++summary.copies;
    summary.bytes = saturating_add(summary.bytes, t.bytes);
    summary.recorded_ns = saturating_add(summary.recorded_ns, elapsed_ns(recorded.start[node], recorded.end[node]));
    summary.baseline_ns = saturating_add(summary.baseline_ns, saturating_round(p.baseline_ns));
    summary.predicted_ns = saturating_add(summary.predicted_ns, saturating_round(p.whatif_ns));
  }
  std::vector<TransferSummary> summaries;
  for (auto& [key, summary] : groups) summaries.push_back(std::move(summary));
  return summaries;
}

void add_kernel_traffic_notes(const KernelTraffic& traffic, const std::string& baseline_system,
                              const std::string& whatif_system, std::vector<std::string>& notes) {
  std::map<std::string, std::set<std::string>> unpriced;  // system -> paths it models nothing like
  int64_t bound_kernels = 0;
  std::set<int64_t> counted;
  for (size_t i = 0; i < traffic.traffic().size(); ++i) {
    const trace::RemoteTraffic& t = traffic.traffic()[i];
    const TrafficPrice& p = traffic.prices()[i];
    if (p.baseline_by.empty()) unpriced[baseline_system].insert(t.path.name());
    if (p.whatif_by.empty()) unpriced[whatif_system].insert(p.whatif_path);
    if (p.priced() && !t.exact && p.whatif_ns != p.baseline_ns && counted.insert(t.kernel_id).second) ++bound_kernels;
  }
  for (const auto& [system, paths] : unpriced) {
    std::string list;
    for (const std::string& path : paths) list += (list.empty() ? "" : ", ") + path;
    notes.push_back("what-if: kernels' loads and stores over " + list + " keep their recorded time: " + system +
                    " models no such path");
  }
  if (bound_kernels > 0) {
    notes.push_back("what-if: " + std::to_string(bound_kernels) +
                    " kernel(s) repriced by bytes that are a bound (their pointer arguments to their "
                    "allocations' ends): apptracer record --exact gives the bytes they touched");
  }
}

}  // namespace apptracer::whatif
