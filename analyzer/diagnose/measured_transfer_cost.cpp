#include "analyzer/diagnose/measured_transfer_cost.h"

#include <algorithm>
#include <cstdio>

namespace apptracer::diagnose {

namespace {

bool matches(const TransferPath& sample, const TransferPath& wanted) {
  if (sample.kind != wanted.kind || sample.host_memory != wanted.host_memory) return false;
  if (wanted.device && sample.device && *sample.device != *wanted.device) return false;
  if (wanted.numa_node && sample.numa_node != wanted.numa_node) return false;
  return true;
}

}  // namespace

TransferPath migration_path(int64_t src_residency, int64_t dst_residency) {
  TransferPath path;
  bool to_device = dst_residency != trace::kHostResidency;
  bool from_device = src_residency != trace::kHostResidency;
  path.kind = to_device ? (from_device ? CopyKind::DtoD : CopyKind::HtoD) : CopyKind::DtoH;
  path.host_memory = MemoryKind::Managed;
  path.device = to_device ? dst_residency : src_residency;
  return path;
}

std::string path_name(const TransferPath& path) {
  std::string name = std::string(to_string(path.kind));
  if (path.kind == CopyKind::HtoD || path.kind == CopyKind::DtoH)
    name += " " + std::string(to_string(path.host_memory));
  if (path.device) name += ", device " + std::to_string(*path.device);
  if (path.numa_node) name += ", NUMA node " + std::to_string(*path.numa_node);
  return name;
}

TransferPath path_of(const Transfer& copy) {
  TransferPath path;
  path.kind = copy.kind();
  MemoryKind host = copy.host_memory();
  // Device-side endpoints of every kind go one way: what matters is the host side.
  path.host_memory = host == MemoryKind::Unknown ? MemoryKind::Device : host;
  if (host == MemoryKind::ManagedStatic) path.host_memory = MemoryKind::Managed;
  path.device = copy.device();
  path.numa_node = copy.host_numa();
  return path;
}

std::optional<LinkFit> fit_link(const std::vector<TransferSample>& samples) {
  if (samples.size() < 2) return std::nullopt;
  auto [smallest, largest] = std::minmax_element(
      samples.begin(), samples.end(),
      [](const TransferSample& a, const TransferSample& b) { return a.bytes < b.bytes; });
  if (largest->bytes / 2 < std::max<int64_t>(smallest->bytes, 1)) return std::nullopt;
  long double n = samples.size(), sum_b = 0, sum_t = 0;
  for (const TransferSample& s : samples) {
    sum_b += s.bytes;
    sum_t += s.duration_ns;
  }
  long double mean_b = sum_b / n, mean_t = sum_t / n, cov = 0, var = 0;
  for (const TransferSample& s : samples) {
    cov += (s.bytes - mean_b) * (s.duration_ns - mean_t);
    var += (s.bytes - mean_b) * (s.bytes - mean_b);
  }
  long double slope = cov / var;  // ns per byte
  long double intercept = mean_t - slope * mean_b;
  if (intercept < 0) {
    // Through the origin: t = bytes / BW.
    intercept = 0;
    slope = sum_t / sum_b;
  }
  if (slope <= 0) return std::nullopt;
  return LinkFit{static_cast<double>(intercept), static_cast<double>(1.0L / slope)};
}

MeasuredTransferCost::MeasuredTransferCost(const TraceFacts& facts) {
  for (const Transfer& copy : facts.ops().copies()) {
    if (!copy.timed() || copy.gpu_ns() <= 0 || copy.kind() == CopyKind::Prefetch ||
        copy.kind() == CopyKind::Unknown)
      continue;
    samples_.push_back({path_of(copy), copy.bytes(), copy.gpu_ns()});
  }
  // Prefetches of managed memory are timed only by their migration records
  // (CUPTI names them "user"): each record is one transfer of the managed path.
  for (const trace::UmEvent& event : facts.um.events) {
    if (!event.is_migration() || event.end_ns <= event.start_ns ||
        static_cast<UmMigrationCause>(event.cause) != UmMigrationCause::User)
      continue;
    samples_.push_back({migration_path(event.src, event.dst), event.bytes,
                        elapsed_ns(event.start_ns, event.end_ns)});
  }
}

MeasuredTransferCost::MeasuredTransferCost(std::vector<TransferSample> samples)
    : samples_(std::move(samples)) {}

std::optional<LinkFit> MeasuredTransferCost::fit(const TransferPath& path) const {
  auto [found, added] = fits_.try_emplace({path.kind, path.host_memory, path.device, path.numa_node});
  if (!added) return found->second;
  std::vector<TransferSample> matching;
  for (const TransferSample& s : samples_) {
    if (matches(s.path, path)) matching.push_back(s);
  }
  found->second = fit_link(matching);
  return found->second;
}

std::optional<double> MeasuredTransferCost::time_ns(const TransferPath& path,
                                                    int64_t bytes) const {
  return time_on(fit(path), bytes);
}

std::string MeasuredTransferCost::describe(const TransferPath& path) const {
  std::optional<LinkFit> found = fit(path);
  if (!found) {
    return "the trace has no copies of two sizes on " + path_name(path) +
           " to measure it; give --system (apptracer links)";
  }
  char text[160];
  std::snprintf(text, sizeof text, "measured in this trace: %s %.2f GB/s, %.1f us latency",
                path_name(path).c_str(), found->bandwidth_gbps, found->latency_ns / 1e3);
  return text;
}

}  // namespace apptracer::diagnose
