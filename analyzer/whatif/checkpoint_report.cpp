#include "analyzer/whatif/checkpoint_report.h"

#include <nlohmann/json.hpp>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/memory/checkpoint_whatif.h"
#include "analyzer/memory/memory_model.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/framework_context.h"

namespace apptracer::whatif {

CheckpointAnswer checkpoint_answer(trace::Trace& trace, const std::string& module) {
  if (!trace::has_framework_ranges(trace))
    throw TraceError("--checkpoint: the trace has no framework context; record it with "
                     "'apptracer record --framework-context on' (or sampled) to know which module's forward and backward did what");
  dvdg::Graph graph = dvdg::build_graph_from_trace(trace);
  memory::MemoryModel model = memory::build_memory_model(trace, graph);
  CheckpointAnswer answer{module, {}};
  for (const memory::CheckpointWhatIf& found : memory::checkpoint_what_if(trace, graph, model, module)) {
    answer.devices.push_back({trace.process(found.device->process).pid, memory::device_name(found.device->device),
                              found.peak_live_bytes, found.peak_if_checkpointed, found.pieces,
                              found.recompute_ns_per_step(), found.steps});
  }
  if (answer.devices.empty())
    throw TraceError("--checkpoint " + module + ": no forward of that module on a GPU whose memory the trace "
                     "records (its modules: apptracer stats TRACE -r modules)");
  return answer;
}

Table checkpoint_table(const CheckpointAnswer& answer) {
  Table table{"checkpoint",
              {"module", "pid", "device", "peak_live_bytes", "peak_if_checkpointed", "saved_bytes",
               "pieces_recomputed", "recompute_ms_per_step", "steps"},
              {}};
  for (const CheckpointDevice& d : answer.devices) {
    table.rows.push_back({answer.module, d.pid, d.device, d.peak_live_bytes, d.peak_if_checkpointed,
                          d.peak_live_bytes - d.peak_if_checkpointed, d.pieces,
                          Cell(static_cast<double>(d.recompute_ns_per_step) / 1e6), d.steps});
  }
  return table;
}

void write_checkpoint_text(std::ostream& out, const CheckpointAnswer& answer, bool after_replay) {
  if (after_replay) out << "\n";
  out << "memory if " << answer.module
      << "'s activations were recomputed in its backward instead of kept (the most live: allocators' caches "
         "not counted; the cost: its forward's GPU time again, per step, or for the run without steps)\n";
  write_tables(out, {checkpoint_table(answer)}, OutputFormat::Table);
}

std::string checkpoint_json(const std::optional<std::string>& replay_json, const std::optional<CheckpointAnswer>& answer) {
  using nlohmann::json;
  json out = replay_json ? json::parse(*replay_json) : json::object();
  if (answer) {
    json devices = json::array();
    for (const CheckpointDevice& d : answer->devices) {
      devices.push_back({{"pid", d.pid},
                         {"device", d.device},
                         {"peak_live_bytes", d.peak_live_bytes},
                         {"peak_if_checkpointed", d.peak_if_checkpointed},
                         {"pieces_recomputed", d.pieces},
                         {"recompute_ns_per_step", d.recompute_ns_per_step},
                         {"steps", d.steps}});
    }
    out["checkpoint"] = {{"module", answer->module}, {"devices", devices}};
  }
  return out.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace apptracer::whatif
