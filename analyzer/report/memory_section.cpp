#include "analyzer/report/memory_section.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/memory/memory_model.h"
#include "analyzer/memory/memory_whatif.h"
#include "analyzer/memory/owner_series.h"
#include "analyzer/memory/producers.h"
#include "analyzer/report/report_units.h"
#include "analyzer/trace/short_names.h"

namespace apptracer::report {

namespace {

using memory::MemoryItem;
using nlohmann::json;

json time_or_null(trace::Trace& trace, const std::optional<int64_t>& ns) {
  return ns ? json(ms(trace.origin().since(*ns))) : json();
}

json live_pieces(trace::Trace& trace, const dvdg::Graph& graph, const memory::MemoryModel& model,
                 const memory::DeviceMemory& device, memory::Producers& producers) {
  json rows = json::array();
  for (size_t i = 0; i < device.live_at_peak.size() && i < kLivePieceLimit; ++i) {
    const memory::LiveItem& live = device.live_at_peak[i];
    const MemoryItem& item = model.items[live.item];
    json producer, nvtx, step, module, op;
    if (item.producer != memory::kNoOp) {
      memory::Producer p = producers.of(graph, item.producer);
      producer = trace::short_kernel_name(p.name);  // `stats --report memory` has the whole name
      nvtx = p.nvtx;
      step = p.step ? json(*p.step) : json();
      module = p.module;
      op = p.op;
    }
    rows.push_back({{"owner", memory::owner_name(item.owner, item.allocator)},
                    {"row", std::string(item.kind == MemoryItem::Kind::Block ? "block #" : "alloc #") +
                                std::to_string(item.id)},
                    {"bytes", live.bytes},
                    {"producer", producer},
                    {"producer_nvtx", nvtx},
                    {"producer_step", step},
                    {"producer_module", module},
                    {"producer_op", op},
                    {"allocated_ms", ms(trace.origin().since(item.alloc_ns))},
                    {"first_use_ms", time_or_null(trace, item.first_use_ns)},
                    {"last_use_ms", time_or_null(trace, item.last_use_ns)},
                    {"freed_ms", time_or_null(trace, item.end_ns)}});
  }
  return rows;
}

}  // namespace

json memory_section(trace::Trace& trace, const dvdg::Graph& graph, const memory::MemoryModel& model,
                    size_t points) {
  memory::Producers producers(trace);
  json devices = json::array();
  for (const memory::DeviceMemory& device : model.devices) {
    if (device.peak_ns.empty()) continue;
    memory::OwnerSeries series = memory::owner_series(model, device, points);
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
