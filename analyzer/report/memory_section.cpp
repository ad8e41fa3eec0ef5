#include "analyzer/report/memory_section.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/memory/memory_model.h"
#include "analyzer/memory/memory_whatif.h"
#include "analyzer/memory/producers.h"
#include "analyzer/trace/short_names.h"

namespace apptracer::report {

namespace {

using memory::MemoryItem;
using nlohmann::json;

double ms(int64_t ns_from_start) { return static_cast<double>(ns_from_start) / 1e6; }

// What `item` adds to each owner while it lives, as memory_model.cpp counts
// it: a segment is its allocator's cache; a block inside one moves its bytes
// from that cache to its own owner.
std::vector<std::pair<std::string, int64_t>> owner_bytes(const memory::MemoryModel& model, const MemoryItem& item) {
  std::string owner = memory::owner_name(item.owner, item.allocator);
  if (item.segment == memory::kNoItem) return {{owner, item.bytes}};
  const MemoryItem& segment = model.items[item.segment];
  return {{owner, item.bytes}, {memory::owner_name(segment.owner, segment.allocator), -item.bytes}};
}

struct OwnerSeries {
  std::vector<std::string> owners;
  std::vector<int64_t> times;               // ns
  std::vector<std::vector<int64_t>> bytes;  // per owner, at each time
};

// Every owner's bytes after each change, kept at most `points` times: in
// each of `points` equal stretches of time, the moment most was in use.
OwnerSeries owner_series(const memory::MemoryModel& model, const memory::DeviceMemory& device, size_t points) {
  std::map<std::string, size_t> index;
  std::vector<std::tuple<int64_t, size_t, int64_t>> changes;  // ns, owner, bytes
  for (const MemoryItem& item : model.items) {
    if (item.process != device.process || item.device != device.device) continue;
    for (const auto& [owner, bytes] : owner_bytes(model, item)) {
      size_t o = index.emplace(owner, index.size()).first->second;
      changes.emplace_back(item.alloc_ns, o, bytes);
      if (item.end_ns) changes.emplace_back(*item.end_ns, o, -bytes);
    }
  }
  OwnerSeries out;
  out.owners.resize(index.size());
  out.bytes.assign(index.size(), {});
  for (const auto& [owner, o] : index) out.owners[o] = owner;
  if (changes.empty()) return out;
  std::stable_sort(changes.begin(), changes.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  double first = static_cast<double>(std::get<0>(changes.front()));
  double width = (static_cast<double>(std::get<0>(changes.back())) - first) / static_cast<double>(std::max<size_t>(1, points)) + 1;
  std::vector<int64_t> now(index.size(), 0);
  size_t bin = SIZE_MAX;
  int64_t kept_total = INT64_MIN;
  for (size_t i = 0; i < changes.size(); ++i) {
    auto [ns, owner, bytes] = changes[i];
    now[owner] = saturating_add(now[owner], bytes);
    if (i + 1 < changes.size() && std::get<0>(changes[i + 1]) == ns) continue;  // one point per time
    int64_t total = 0;
    for (int64_t b : now) total = saturating_add(total, b);
    size_t at = static_cast<size_t>((static_cast<double>(ns) - first) / width);
    if (at == bin && total <= kept_total) continue;
    if (at != bin) {
      out.times.push_back(ns);
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].push_back(now[o]);
    } else {
      out.times.back() = ns;
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].back() = now[o];
    }
    bin = at;
    kept_total = total;
  }
  return out;
}

json time_or_null(trace::Trace& trace, const std::optional<int64_t>& ns) {
  return ns ? json(ms(trace.origin().since(*ns))) : json();
}

json live_pieces(trace::Trace& trace, const dvdg::Graph& graph, const memory::MemoryModel& model,
                 const memory::DeviceMemory& device, memory::Producers& producers) {
  json rows = json::array();
  for (size_t i = 0; i < device.live_at_peak.size() && i < kLivePieceLimit; ++i) {
    const memory::LiveItem& live = device.live_at_peak[i];
    const MemoryItem& item = model.items[live.item];
    json producer, nvtx, step;
    if (item.producer != memory::kNoOp) {
      memory::Producer p = producers.of(graph, item.producer);
      producer = trace::short_kernel_name(p.name);  // `stats --report memory` has the whole name
      nvtx = p.nvtx;
      step = p.step ? json(*p.step) : json();
    }
    rows.push_back({{"owner", memory::owner_name(item.owner, item.allocator)},
                    {"row", std::string(item.kind == MemoryItem::Kind::Block ? "block #" : "alloc #") +
                                std::to_string(item.id)},
                    {"bytes", live.bytes},
                    {"producer", producer},
                    {"producer_nvtx", nvtx},
                    {"producer_step", step},
                    {"allocated_ms", ms(trace.origin().since(item.alloc_ns))},
                    {"first_use_ms", time_or_null(trace, item.first_use_ns)},
                    {"last_use_ms", time_or_null(trace, item.last_use_ns)},
                    {"freed_ms", time_or_null(trace, item.end_ns)}});
  }
  return rows;
}

}  // namespace

json memory_section(trace::Trace& trace, const dvdg::Graph& graph, size_t points) {
  memory::MemoryModel model = memory::build_memory_model(trace, graph);
  memory::Producers producers(trace);
  json devices = json::array();
  for (const memory::DeviceMemory& device : model.devices) {
    if (device.peak_ns.empty()) continue;
    OwnerSeries series = owner_series(model, device, points);
    json times = json::array();
    for (int64_t ns : series.times) times.push_back(ms(trace.origin().since(ns)));
    json at_peak = json::array();
    for (const memory::OwnerBytes& owner : device.at_peak) {
      at_peak.push_back({{"owner", memory::owner_name(owner.owner, owner.allocator)},
                         {"bytes", owner.bytes},
                         {"pieces", owner.items}});
    }
    std::optional<int64_t> step;
    if (const trace::ProcessSteps* steps = trace.steps().find(device.process)) {
      if (auto index = steps->step_at(device.at_ns)) step = steps->steps[*index].number;
    }
    memory::MemoryWhatIf whatif = memory::memory_what_if(trace, model, device);
    devices.push_back({{"device", memory::device_name(device.device)},
                       {"pid", trace.process(device.process).pid},
                       {"peak_bytes", device.peak_bytes},
                       {"peak_ms", ms(trace.origin().since(device.at_ns))},
                       {"peak_step", step ? json(*step) : json()},
                       {"peak_live_bytes", device.peak_live_bytes},
                       {"peak_if_freed_at_last_use", whatif.freed_at_last_use},
                       {"peak_if_cache_released_between_steps", whatif.cache_released_between_steps},
                       {"owners", series.owners},
                       {"times_ms", times},
                       {"bytes", series.bytes},
                       {"at_peak", at_peak},
                       {"live", live_pieces(trace, graph, model, device, producers)},
                       {"live_pieces", device.live_at_peak.size()}});
  }
  return {{"devices", devices}};
}

}  // namespace apptracer::report
