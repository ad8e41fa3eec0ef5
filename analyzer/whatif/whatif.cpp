#include "analyzer/whatif/whatif.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "apptracer/saturating.h"
#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/model/link_override.h"
#include "analyzer/trace/remote_kernel_traffic.h"
#include "analyzer/whatif/graph_regions.h"
#include "analyzer/whatif/host_waits.h"
#include "analyzer/whatif/kernel_traffic.h"
#include "analyzer/whatif/overlap.h"
#include "analyzer/whatif/peer_relays.h"
#include "analyzer/whatif/recorded.h"
#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/scenario.h"
#include "analyzer/model/system_file.h"
#include "analyzer/whatif/replay_timeline.h"
#include "analyzer/whatif/untraced.h"
#include "analyzer/whatif/untraced_step.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer::whatif {

namespace {

constexpr size_t kMostFallbackNotes = 5;

// The recording as a timeline, so phases read it like the replays.
Timeline recorded_timeline(const ReplayInput& input, const RecordedTiming& recorded) {
  Timeline t;
  t.start = recorded.start;
  t.end = recorded.end;
  t.first_ns = INT64_MAX;
  for (const HostCall& call : input.calls) t.first_ns = std::min(t.first_ns, call.start_ns);
  for (const ReplayOp& op : input.ops) t.first_ns = std::min(t.first_ns, op.issue_ns);
  t.last_ns = t.first_ns;
  for (int64_t end : t.end) t.last_ns = std::max(t.last_ns, end);
  return t;
}

std::string copy_description(const ReplayOp& op) {
  if (op.kind == OpKind::Prefetch) return op.dst_device ? "prefetch to GPU" : "prefetch to host";
  return std::string(to_string(op.copy_kind)) + " " + std::string(to_string(op.src_memory)) + " -> " +
         std::string(to_string(op.dst_memory));
}

std::string recorded_on(trace::Trace& trace, const ReplayInput& input) {
  std::map<std::string, int> gpus;
  for (const std::string& name : input.device_names) {
    if (!name.empty()) ++gpus[name];
  }
  std::string text = trace.meta("host");
  if (text.empty()) text = "unknown host";
  std::string inside;
  for (const auto& [name, count] : gpus) {
    inside += (inside.empty() ? "" : ", ") + std::to_string(count) + "x " + name;
  }
  return inside.empty() ? text : text + " (" + inside + ")";
}

// Copies' times are their replays' (duplex contention stretches some).
std::vector<TransferSummary> summarize_transfers(const ReplayInput& input, const ReplayGraph& graph,
                                                 const RecordedTiming& recorded,
                                                 const ScenarioTiming& baseline, const Timeline& baseline_run,
                                                 const ScenarioTiming& whatif, const Timeline& whatif_run) {
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  std::map<Key, TransferSummary> groups;
  std::vector<Key> order;
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.kind != OpKind::Copy && op.kind != OpKind::Prefetch) continue;
    const TransferUse& base = baseline.transfers[i];
    const TransferUse& what = whatif.transfers[i];
    Key key{base.wanted, copy_description(op), base.used, what.wanted, what.used};
    auto [it, inserted] = groups.emplace(key, TransferSummary{});
    TransferSummary& summary = it->second;
    if (inserted) {
      order.push_back(key);
      summary.path = base.wanted;
      summary.kind = copy_description(op);
      summary.baseline_by = base.used;
      summary.whatif_path = what.wanted;
      summary.whatif_by = what.used;
    }
    uint32_t node = graph.op_node(i);
    ++summary.copies;
    summary.bytes = saturating_add(summary.bytes, op.bytes);
    summary.recorded_ns =
        saturating_add(summary.recorded_ns, elapsed_ns(recorded.start[node], recorded.end[node]));
    summary.baseline_ns =
        saturating_add(summary.baseline_ns, elapsed_ns(baseline_run.start[node], baseline_run.end[node]));
    summary.predicted_ns =
        saturating_add(summary.predicted_ns, elapsed_ns(whatif_run.start[node], whatif_run.end[node]));
  }
  std::vector<TransferSummary> summaries;
  for (const Key& key : order) summaries.push_back(groups[key]);
  return summaries;
}

// Copies a replay kept at their recorded time because `system` prices no
// path like theirs: "baseline: 3 copies keep ...".
void add_kept_note(const std::vector<TransferSummary>& transfers, bool whatif, const std::string& system,
                   std::vector<std::string>& notes) {
  int64_t kept = 0;
  std::set<std::string> kinds;
  for (const TransferSummary& t : transfers) {
    const std::string& by = whatif ? t.whatif_by : t.baseline_by;
    const std::string& path = whatif ? t.whatif_path : t.path;
    if (!by.empty() || t.kernel_traffic) continue;
    kept += t.copies;
    kinds.insert(path.empty() ? t.kind : path);
  }
  if (kept == 0) return;
  std::string list;
  for (const std::string& kind : kinds) list += (list.empty() ? "" : ", ") + kind;
  notes.push_back(std::string(whatif ? "what-if: " : "baseline: ") + std::to_string(kept) + " cop" +
                  (kept == 1 ? "y keeps its" : "ies keep their") + " recorded time: " + system +
                  " models no path for " + list);
}

// Copies over a GPU's host link that ran beside copies the other way: how
// many were slowed by their path's duplex share, how many could not be (a
// system file from before links measured it), and a replay that did not settle.
void add_duplex_notes(const ScenarioTiming& timing, const Timeline& run, bool whatif, const std::string& system,
                      std::vector<std::string>& notes) {
  std::string scenario = whatif ? "what-if: " : "baseline: ";
  int64_t slowed = 0;
  std::set<std::string> unmeasured;
  for (size_t i = 0; i < run.opposed.size(); ++i) {
    if (!run.opposed[i]) continue;
    const TransferUse& use = timing.transfers[i];
    bool host_copy = use.used.rfind("HtoD.", 0) == 0 || use.used.rfind("DtoH.", 0) == 0;
    if (use.from_recording) continue;
    if (use.duplex_measured) {
      ++slowed;
    } else if (host_copy) {
      unmeasured.insert(use.used);
    }
  }
  if (slowed > 0) {
    notes.push_back(scenario + std::to_string(slowed) + " cop" + (slowed == 1 ? "y" : "ies") +
                    " ran beside copies the other way over their GPU's host link, at their path's duplex "
                    "share meanwhile (" + std::to_string(run.replays) + " replays)");
  }
  if (!unmeasured.empty()) {
    std::string list;
    for (const std::string& path : unmeasured) list += (list.empty() ? "" : ", ") + path;
    notes.push_back(scenario + system + " has no duplex measurement for " + list +
                    ": copies beside copies the other way are not slowed (measure again with apptracer links)");
  }
  if (!run.settled) {
    notes.push_back(scenario + "duplex contention still moved copies after " + std::to_string(run.replays) +
                    " replays: the last is shown");
  }
}

void add_prefetch_note(const PrefetchUse& use, const WhatifOptions& options, std::vector<std::string>& notes) {
  const std::string& system = options.system2_path.empty() ? options.system_path : options.system2_path;
  if (use.kernels == 0 && use.unpriced == 0) {
    notes.push_back("--prefetch-managed: no kernel migrated managed memory on demand in this trace "
                    "(migrations are recorded with apptracer record --unified-memory)");
    return;
  }
  if (use.kernels > 0) {
    notes.push_back("--prefetch-managed: " + std::to_string(use.kernels) + " kernel(s) had their on-demand " +
                    "migrations (" + std::to_string(use.bytes >> 20) + " MiB) prefetched before them");
  }
  if (use.unpriced > 0) {
    notes.push_back("--prefetch-managed: " + std::to_string(use.unpriced) + " kernel(s) kept as recorded: " +
                    system + " has no fault.HtoD or prefetch.HtoD path for their GPU");
  }
}

// Paths that were not measured and were priced by a stand-in.
void add_fallback_notes(const std::vector<TransferSummary>& transfers, std::vector<std::string>& notes) {
  std::set<std::pair<std::string, std::string>> fallbacks;
  for (const TransferSummary& t : transfers) {
    if (!t.baseline_by.empty() && t.baseline_by != t.path) fallbacks.emplace(t.path, t.baseline_by);
    if (!t.whatif_by.empty() && t.whatif_by != t.whatif_path) fallbacks.emplace(t.whatif_path, t.whatif_by);
  }
  size_t shown = 0;
  for (const auto& [wanted, used] : fallbacks) {
    if (++shown > kMostFallbackNotes) {
      notes.push_back("... " + std::to_string(fallbacks.size()) + " paths priced by another in all");
      break;
    }
    notes.push_back(wanted + " was not measured: priced as " + used);
  }
}

// Whether `system` may describe the machine the trace was recorded on: it
// has a GPU of a name the trace has (or either does not say).
bool describes_recording_machine(const ReplayInput& input, const model::SystemModel& system) {
  std::set<std::string> traced(input.device_names.begin(), input.device_names.end());
  traced.erase("");
  if (traced.empty() || system.machine.gpus.empty()) return true;
  for (const model::GpuInfo& gpu : system.machine.gpus) {
    if (traced.count(gpu.name)) return true;
  }
  return false;
}

void add_machine_note(const ReplayInput& input, const model::SystemModel& system, const std::string& file,
                      std::vector<std::string>& notes) {
  if (describes_recording_machine(input, system)) return;
  std::set<std::string> traced(input.device_names.begin(), input.device_names.end());
  traced.erase("");
  notes.push_back("the trace was recorded on " + *traced.begin() + ", " + file + " describes " +
                  system.machine.gpus.front().name + ": its baseline is not the recording's machine");
}

// Where a synchronization's own cost came from: `links` measures none, so
// the trace's synchronizations that waited for nothing (recorded.h).
void add_sync_cost_note(const ReplayInput& input, const Typicals& typical, std::vector<std::string>& notes) {
  if (input.syncs.empty()) return;
  char cost[32];
  std::snprintf(cost, sizeof cost, "%.1f us", static_cast<double>(typical.sync_call_ns) / 1000);
  std::string from = typical.idle_syncs > 0
                         ? "the median of the trace's " + std::to_string(typical.idle_syncs) +
                               " that waited for nothing"
                         : "the trace's typical return after awaited work (none waited for nothing)";
  notes.push_back("a synchronization waits for the work it awaits in the replay, plus its own cost: " +
                  std::string(cost) + ", " + from + " (the system file measures none)");
}

// A trace from before the tracer kept `streams`: which stream is the legacy
// default one, and which are blocking, is unknown.
void add_stream_kinds_note(const ReplayInput& input, std::vector<std::string>& notes) {
  if (!input.stream_kinds.empty() || input.ops.empty()) return;
  notes.push_back("the trace does not say which stream is the legacy default one (recorded before apptracer "
                  "kept streams): its implicit ordering with blocking streams is left out");
}

dvdg::Graph read_dvdg(trace::Trace& trace) {
  try {
    return dvdg::build_graph_from_trace(trace);
  } catch (const SqliteError& error) {
    throw TraceError(trace.path() + ": damaged or incomplete trace (" + error.what() + ")");
  }
}

// The steady steps' time in the baseline and the what-if, per step: what a
// change saves where the program has steps.
void add_step_note(const std::vector<Phase>& phases, std::vector<std::string>& notes) {
  for (const Phase& phase : phases) {
    if (phase.kind != "steps" || phase.count == 0) continue;
    auto per_step = [&](int64_t ns) { return static_cast<double>(ns) / 1e6 / static_cast<double>(phase.count); };
    char text[200];
    std::snprintf(text, sizeof text,
                  "a steady step takes %.3f ms in the what-if, %.3f ms in the baseline "
                  "(%.3f ms recorded): %.3f ms saved per step",
                  per_step(phase.ns[2]), per_step(phase.ns[1]), per_step(phase.ns[0]),
                  per_step(phase.ns[1]) - per_step(phase.ns[2]));
    notes.push_back(text);
  }
}

// The steps of the trace's process; nullptr where it has none.
const trace::ProcessSteps* process_steps(trace::Trace& trace) {
  const std::vector<trace::ProcessSteps>& processes = trace.steps().processes;
  return processes.empty() ? nullptr : &processes.front();
}

// The path names to show for copies on the critical path.
std::vector<std::string> copy_names(const ScenarioTiming& timing) {
  std::vector<std::string> names;
  for (const TransferUse& use : timing.transfers) names.push_back(use.wanted);
  return names;
}

}  // namespace

bool WhatifOptions::changes_anything() const {
  return !system2_path.empty() || pin || numa_node || !links.empty() || overlap || kernel_scale != 1.0 ||
         prefetch_managed || peer_copies || graphs || no_syncs || non_blocking;
}

std::vector<std::string> WhatifOptions::describe() const {
  std::vector<std::string> words;
  if (!system2_path.empty()) words.push_back("--system2 " + system2_path);
  if (pin) words.push_back("--pin");
  if (numa_node) words.push_back("--numa " + std::to_string(*numa_node));
  for (const std::string& link : links) words.push_back("--link " + link);
  if (overlap) words.push_back("--overlap");
  if (prefetch_managed) words.push_back("--prefetch-managed");
  if (peer_copies) words.push_back("--peer-copies");
  if (graphs) words.push_back("--graphs");
  if (no_syncs) words.push_back("--no-syncs");
  if (non_blocking) words.push_back("--non-blocking");
  if (kernel_scale != 1.0) {
    std::ostringstream scale;
    scale << kernel_scale;
    words.push_back("--kernel-scale " + scale.str());
  }
  return words;
}

WhatifResult run_whatif(trace::Trace& trace, const WhatifOptions& options) {
  const std::string& trace_path = trace.path();
  model::SystemModel system = model::load_system(options.system_path);
  model::SystemModel changed =
      options.system2_path.empty() ? system : model::load_system(options.system2_path);
  WhatifResult result;
  result.trace = trace_path;
  result.system = options.system_path + ": " + system.describe();
  if (!options.system2_path.empty()) result.system2 = options.system2_path + ": " + changed.describe();
  result.changes = options.describe();
  for (const std::string& text : options.links) {
    std::vector<std::string> paths = model::apply_link_override(changed, model::parse_link_override(text));
    result.notes.push_back("--link " + text + " changed " + std::to_string(paths.size()) + " path(s)");
  }

  ReplayInput input;
  try {
    input = read_replay_input(trace);
  } catch (const SqliteError& error) {
    throw TraceError(trace_path + ": damaged or incomplete trace (" + error.what() + ")");
  }
  result.recorded_on = recorded_on(trace, input);
  GraphOptions recorded_options;
  recorded_options.blocking = blocking_copies(input, false);
  ReplayGraph recorded_graph = build_replay_graph(input, recorded_options);
  RecordedTiming recorded = recorded_timing(input, recorded_graph);
  Timeline recording = recorded_timeline(input, recorded);

  const model::SystemModel* recorded_on = describes_recording_machine(input, system) ? &system : nullptr;
  Scenario base_scenario;
  base_scenario.system = &system;
  base_scenario.recorded_on = recorded_on;
  ScenarioTiming base = scenario_timing(input, recorded, recorded_graph, recorded_graph, base_scenario);
  // Priced against the untraced program where the recording machine's cost
  // of tracing is known (untraced.h).
  TracingAdded tracing;
  const trace::TracerTime& tracer_time = trace.tracer_time();
  const std::vector<trace::TracerTime::Stretch>& stretches = tracer_time.stretches(trace::kSingleProcess);
  model::TracingLevel level = model::tracing_level_of(trace.meta("options"));
  // Where links split its cost, CUPTI's part per launch from it and the
  // tracer's callbacks from the trace's own measure of them (tracing_cost.h).
  bool split = recorded_on && system.tracing_cost && system.tracing_cost->callbacks_measured() &&
               tracer_time.measures_callbacks();
  if (recorded_on && system.tracing_cost) {
    tracing.per_launch_ns = saturating_round(split ? system.tracing_cost->cupti_added_ns(level)
                                                   : system.tracing_cost->added_ns(level));
  }
  if (recorded_on && system.graph_launch) tracing.graph_launch = &*system.graph_launch;
  tracing.before_calls = tracer_time_before_calls(input, stretches);
  if (split) tracing.in_calls = tracer_time_in_calls(input, stretches);
  UntracedCalls untraced_calls = tracing.any() ? remove_tracing_cost(input, tracing, base.timing) : UntracedCalls{};
  const trace::ProcessSteps* steps = process_steps(trace);
  std::optional<FittedHostTime> fitted;
  if (options.untraced_step_ns) {
    fitted = fit_to_untraced_step(input, recorded_graph, steps, *options.untraced_step_ns, base.timing,
                                  trace_path);
    scale_program_host_time(input, fitted->factor, base.timing);
  }
  Timeline baseline = simulate(input, recorded_graph, base.timing);

  Scenario what;
  what.system = &changed;
  what.recorded_on = recorded_on;
  what.pin = options.pin;
  what.numa_node = options.numa_node;
  what.overlap = options.overlap;
  what.kernel_scale = options.kernel_scale;
  what.prefetch_managed = options.prefetch_managed;
  KernelTraffic kernel_traffic(trace::remote_kernel_traffic(trace), system, changed, options.numa_node);
  if (options.changes_anything()) what.kernel_traffic = &kernel_traffic;
  GraphOptions what_options;
  what_options.blocking = blocking_copies(input, options.pin);
  if (options.no_syncs) {
    HostWaitPlan waits = plan_no_host_waits(input, steps, what_options.blocking);
    what_options.dropped_syncs = std::move(waits.dropped_syncs);
    result.notes.push_back(host_wait_note(waits));
  }
  if (options.non_blocking) {
    HostWaitPlan uploads = plan_non_blocking_copies(input, steps, what_options.dropped_syncs);
    result.notes.push_back("--non-blocking: " + std::to_string(uploads.syncs) +
                           " synchronization(s) of a copy's stream right after it on its thread (a blocking copy "
                           "from host memory to a GPU) in " + uploads.where + " no longer wait");
  }
  // What ends a graph region: the what-if's waits, before --peer-copies changes
  // its copies (a relay's copies end regions as recorded).
  GraphOptions capture = what_options;
  dvdg::Graph graph;
  if (options.overlap || options.peer_copies) graph = read_dvdg(trace);
  if (options.overlap) {
    OverlapPlan plan = plan_overlap(input, graph);
    what_options.moved = plan.moved;
    what_options.data = plan.data;
    result.notes.push_back("--overlap: " + std::to_string(plan.moved_copies) +
                           " cop" + (plan.moved_copies == 1 ? "y" : "ies") +
                           " moved off the streams of their kernels");
  }
  const std::string& whatif_system = options.system2_path.empty() ? options.system_path : options.system2_path;
  PeerRelayPlan relays;
  if (options.peer_copies) {
    relays = plan_peer_relays(input, graph, changed);
    apply_peer_relays(relays, input, what_options);
    what.peer_relays = &relays;
    add_peer_relay_notes(relays, whatif_system, result.notes);
  }
  // --graphs: the what-if replays an input whose captured calls follow their graph's launch.
  GraphPlan graphs;
  ReplayInput graphed;
  if (options.graphs) {
    graphs = plan_graphs(input, steps, capture);
    graphed = input;
    wake_captured_calls(graphs, graphed);
  }
  const ReplayInput& what_input = options.graphs ? graphed : input;
  ReplayGraph what_graph =
      options.changes_anything() ? build_replay_graph(what_input, what_options) : recorded_graph;
  ScenarioTiming what_timing = scenario_timing(input, recorded, recorded_graph, what_graph, what);
  if (untraced_calls.any()) remove_tracing_cost(input, tracing, what_timing.timing);
  if (fitted) scale_program_host_time(input, fitted->factor, what_timing.timing);
  if (options.graphs) {
    GraphCost cost = graph_cost(changed, whatif_system);
    time_graph_launches(graphs, cost, what_input, recorded.typical, what_timing.timing);
    add_graph_notes(graphs, cost, result.notes);
  }
  Timeline predicted =
      options.changes_anything() ? simulate(what_input, what_graph, what_timing.timing) : baseline;
  if (options.prefetch_managed) add_prefetch_note(what_timing.prefetch, options, result.notes);

  result.recorded_ns = elapsed_ns(recording.first_ns, recording.last_ns);
  result.baseline_ns = elapsed_ns(baseline.first_ns, baseline.last_ns);
  result.predicted_ns = elapsed_ns(predicted.first_ns, predicted.last_ns);
  // The steady steps first: what a change saves per step is the row a
  // training run is asked about, above its ranges or periods.
  result.phases = steps_phase(input, steps, {&recording, &baseline, &predicted});
  for (Phase& phase : phases(input, {&recording, &baseline, &predicted})) result.phases.push_back(std::move(phase));
  if (options.changes_anything()) add_step_note(result.phases, result.notes);
  result.transfers = summarize_transfers(input, recorded_graph, recorded, base, baseline, what_timing, predicted);
  for (TransferSummary& row :
       kernel_traffic_summaries(kernel_traffic, input, recorded_graph, recorded)) {
    result.transfers.push_back(std::move(row));
  }
  result.critical_path = critical_path(what_input, what_graph, predicted, copy_names(what_timing));
  add_machine_note(input, system, options.system_path, result.notes);
  if (untraced_calls.kernel_launches > 0) {
    char text[64];
    std::snprintf(text, sizeof text, "%.2f us", static_cast<double>(tracing.per_launch_ns) / 1000);
    result.notes.push_back("priced against the untraced program: " + std::string(text) + " taken off each of " +
                           std::to_string(untraced_calls.kernel_launches) + " kernel launch calls, what " +
                           (split ? "CUPTI's dispatch" : "tracing") + " at level " + model::to_string(level) +
                           " adds to a launch on this machine (" + options.system_path +
                           ", measured by apptracer links)");
  }
  // The tracer's own time the trace measured, taken off where it ran.
  auto tracer_time_note = [&](int64_t ns, const std::string& where_and_what) {
    if (ns <= 0) return;
    char text[64];
    std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(ns) / 1e6);
    result.notes.push_back("priced against the untraced program: " + std::string(text) + " taken off " +
                           where_and_what + ", as the trace measured them (tracer_time)");
  };
  tracer_time_note(untraced_calls.in_calls_ns, "the calls, what the tracer's own CUDA callbacks took in them");
  tracer_time_note(untraced_calls.before_calls_ns,
                   "the host's time between calls, what the tracer's own hooks took there (allocator events, op "
                   "and module ranges)");
  if (untraced_calls.graph_launches > 0) {
    result.notes.push_back("priced against the untraced program: " + std::to_string(untraced_calls.graph_launches) +
                           " graph launch calls cut to the untraced launch of their nodes on this machine (" +
                           options.system_path + ", measured by apptracer links)");
  }
  if (fitted) result.notes.push_back(untraced_step_note(*fitted, *options.untraced_step_ns));
  add_sync_cost_note(input, recorded.typical, result.notes);
  add_stream_kinds_note(input, result.notes);
  add_kept_note(result.transfers, false, options.system_path, result.notes);
  add_duplex_notes(base, baseline, false, options.system_path, result.notes);
  if (options.changes_anything()) {
    add_kept_note(result.transfers, true, whatif_system, result.notes);
    add_duplex_notes(what_timing, predicted, true, whatif_system, result.notes);
    add_kernel_traffic_notes(kernel_traffic, options.system_path, whatif_system, result.notes);
  }
  add_fallback_notes(result.transfers, result.notes);
  if (system.machine.quick) result.notes.push_back(options.system_path + " was measured with links --quick");
  return result;
}

}  // namespace apptracer::whatif
