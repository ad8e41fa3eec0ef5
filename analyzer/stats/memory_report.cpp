// `stats --report memory`: where each device's memory went (analyzer/memory):
// its peak and the what-if peaks, the owners at the peak, the live set at the
// peak with each piece's producer and uses, and each step's memory at its
// end. Times since the trace's start. Printed only when asked for: it builds
// the DVDG's accesses (not the graph) for the uses.
#include "analyzer/dvdg/op_accesses.h"
#include "analyzer/memory/memory_model.h"
#include "analyzer/memory/memory_whatif.h"
#include "analyzer/memory/producers.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/short_names.h"

namespace apptracer {

namespace {

using memory::DeviceMemory;
using memory::MemoryItem;

Cell time_cell(const trace::TimeOrigin& origin, const std::optional<int64_t>& ns) {
  return ns ? Cell(origin.since(*ns)) : Cell();
}

Table peaks_table(trace::Trace& trace, const memory::MemoryModel& model) {
  Table table{"memory_peaks",
              {"pid", "device", "peak_bytes", "peak_time_ns", "peak_moments", "peak_step", "peak_live_bytes",
               "peak_if_freed_at_last_use", "peak_if_cache_released_between_steps"},
              {}};
  for (const DeviceMemory& device : model.devices) {
    if (device.peak_ns.empty()) continue;
    memory::MemoryWhatIf whatif = memory::memory_what_if(trace, model, device);
    std::optional<int64_t> step;
    if (const trace::ProcessSteps* steps = trace.steps().find(device.process)) {
      if (auto index = steps->step_at(device.at_ns)) step = steps->steps[*index].number;
    }
    table.rows.push_back({trace.process(device.process).pid, memory::device_name(device.device),
                          device.peak_bytes, trace.origin().since(device.at_ns),
                          static_cast<int64_t>(device.peak_ns.size()), optional_cell(step),
                          device.peak_live_bytes, whatif.freed_at_last_use,
                          whatif.cache_released_between_steps});
  }
  return table;
}

Table owners_table(trace::Trace& trace, const memory::MemoryModel& model) {
  Table table{"memory_owners_at_peak", {"pid", "device", "owner", "bytes", "pieces"}, {}};
  for (const DeviceMemory& device : model.devices) {
    for (const memory::OwnerBytes& owner : device.at_peak) {
      table.rows.push_back({trace.process(device.process).pid, memory::device_name(device.device),
                            memory::owner_name(owner.owner, owner.allocator), owner.bytes, owner.items});
    }
  }
  return table;
}

// Pieces of memory_live_at_peak the table format shows, the largest: a
// training step's peak holds thousands (1,140 on a ViT's), which the owners
// table sums; CSV, JSON and t.memory_at_peak() list every one.
constexpr size_t kLivePiecesShown = 25;

Table live_table(trace::Trace& trace, const dvdg::OpTable& ops, const memory::MemoryModel& model,
                 memory::Producers& producers) {
  Table table{"memory_live_at_peak",
              {"pid", "device", "owner", "table", "id", "bytes", "allocated_ns", "freed_ns", "first_use_ns",
               "last_use_ns", "producer", "producer_nvtx", "producer_step", "producer_module", "producer_op"},
              {},
              kLivePiecesShown};
  set_text_form(table, "producer", trace::short_kernel_name_cell);
  const trace::TimeOrigin& origin = trace.origin();
  for (const DeviceMemory& device : model.devices) {
    for (const memory::LiveItem& live : device.live_at_peak) {
      const MemoryItem& item = model.items[live.item];
      Cell name, nvtx, step, module, op;
      if (item.producer != memory::kNoOp) {
        memory::Producer producer = producers.of(ops, item.producer);
        name = producer.name;
        nvtx = producer.nvtx;
        step = optional_cell(producer.step);
        module = producer.module;
        op = producer.op;
      }
      table.rows.push_back({trace.process(device.process).pid, memory::device_name(device.device),
                            memory::owner_name(item.owner, item.allocator),
                            item.kind == MemoryItem::Kind::Block ? "sub_allocations" : "allocations", item.id,
                            live.bytes, origin.since(item.alloc_ns), time_cell(origin, item.end_ns),
                            time_cell(origin, item.first_use_ns), time_cell(origin, item.last_use_ns), name,
                            nvtx, step, module, op});
    }
  }
  return table;
}

Table steps_table(trace::Trace& trace, const memory::MemoryModel& model) {
  Table table{"memory_steps",
              {"pid", "device", "step", "in_use_bytes", "live_bytes", "framework_live_bytes",
               "framework_reserved_bytes", "step_peak_bytes"},
              {}};
  for (const DeviceMemory& device : model.devices) {
    for (const memory::StepMemory& step : device.steps) {
      table.rows.push_back({trace.process(device.process).pid, memory::device_name(device.device), step.number,
                            step.in_use, step.live, step.framework_live, step.reserved, step.peak});
    }
  }
  return table;
}

}  // namespace

ReportOutput memory_report(trace::Trace& trace) {
  // The view needs which ops touched each piece, not the graph's values.
  dvdg::OpAccesses accesses = dvdg::find_op_accesses(trace);
  memory::MemoryModel model = memory::build_memory_model(trace, accesses);
  if (model.devices.empty()) return {{}, "memory: the trace records no allocation"};
  memory::Producers producers(trace);
  return {{peaks_table(trace, model), owners_table(trace, model), live_table(trace, accesses, model, producers),
           steps_table(trace, model)},
          ""};
}

}  // namespace apptracer
