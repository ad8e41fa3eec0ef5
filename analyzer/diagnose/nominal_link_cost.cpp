#include "analyzer/diagnose/nominal_link_cost.h"

#include <algorithm>
#include <cstdio>

namespace apptracer::diagnose {

namespace {

std::string link_text(const NominalLink& link) {
  char text[64];
  std::snprintf(text, sizeof text, "PCIe Gen%d x16 nominal (%.2f GB/s per direction)",
                link.generation, link.x16_gbps);
  return text;
}

}  // namespace

NominalLink nominal_link(int64_t cc_major) {
  if (cc_major >= 9) return {5, 63.0};
  if (cc_major == 8) return {4, 31.5};
  return {3, 15.75};
}

NominalLinkCost::NominalLinkCost(const std::vector<Device>& devices) {
  for (const Device& device : devices) {
    if (device.cc_major()) links_.emplace_back(device.id(), nominal_link(*device.cc_major()));
  }
}

const NominalLink* NominalLinkCost::link_of(const TransferPath& path) const {
  auto found = std::find_if(links_.begin(), links_.end(), [&](const auto& entry) {
    return entry.first == path.device.value_or(0);
  });
  return found == links_.end() ? nullptr : &found->second;
}

std::optional<LinkFit> NominalLinkCost::fit(const TransferPath& path) const {
  if (path.kind != CopyKind::HtoD && path.kind != CopyKind::DtoH) return std::nullopt;
  double share = path.host_memory == MemoryKind::Pinned     ? kPinnedShare
                 : path.host_memory == MemoryKind::Pageable ? kPinnedShare * kPageableShare
                                                            : 0.0;
  const NominalLink* link = link_of(path);
  if (share == 0.0 || !link) return std::nullopt;
  return LinkFit{kNominalLatencyNs, link->x16_gbps * share};
}

std::optional<double> NominalLinkCost::time_ns(const TransferPath& path, int64_t bytes) const {
  return time_on(fit(path), bytes);
}

std::string NominalLinkCost::describe(const TransferPath& path) const {
  std::optional<LinkFit> found = fit(path);
  if (!found) {
    return "the trace has no copies of two sizes on " + path_name(path) +
           " to measure it and the default model has no link for it; give --system (apptracer "
           "links)";
  }
  char numbers[64];
  std::snprintf(numbers, sizeof numbers, "%.2f GB/s, %.1f us latency", found->bandwidth_gbps,
                found->latency_ns / 1e3);
  return "default model: " + path_name(path) + " over " + link_text(*link_of(path)) + ", " +
         numbers;
}

std::string NominalLinkCost::name() const {
  std::string text;
  for (int generation : {5, 4, 3}) {
    std::string devices;
    const NominalLink* link = nullptr;
    for (const auto& [device, its_link] : links_) {
      if (its_link.generation != generation) continue;
      devices += (devices.empty() ? "" : ", ") + std::to_string(device);
      link = &its_link;
    }
    if (link) text += (text.empty() ? "" : "; ") + link_text(*link) + " for device(s) " + devices;
  }
  if (text.empty()) return "";
  char shares[128];
  std::snprintf(shares, sizeof shares,
                ": pinned copies at %.0f%% of it, pageable at %.0f%% of pinned, %.0f us latency",
                kPinnedShare * 100, kPageableShare * 100, kNominalLatencyNs / 1e3);
  return text + shares;
}

MeasuredOrNominalCost::MeasuredOrNominalCost(const TraceFacts& facts)
    : measured_(facts), nominal_(facts.ops().devices()) {}

std::optional<double> MeasuredOrNominalCost::time_ns(const TransferPath& path,
                                                     int64_t bytes) const {
  if (std::optional<double> measured = measured_.time_ns(path, bytes)) return measured;
  return nominal_.time_ns(path, bytes);
}

std::string MeasuredOrNominalCost::describe(const TransferPath& path) const {
  return measured_.fit(path) ? measured_.describe(path) : nominal_.describe(path);
}

std::string MeasuredOrNominalCost::name() const {
  std::string nominal = nominal_.name();
  if (nominal.empty())
    return "bandwidths measured in the trace (give --system for a machine's link model)";
  return "bandwidths measured in the trace; where it measured none, the default model: " +
         nominal + " (give --system for a machine's measured links)";
}

}  // namespace apptracer::diagnose
